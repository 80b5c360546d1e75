# ruff: noqa
# A training step accidentally decorated with @torch.no_grad(): the loss has no grad_fn and backward() fails; the fixed method works.
import torch
torch.manual_seed(12)

class Trainer:
    def __init__(self):
        self.w = torch.randn(3, requires_grad=True)
        self.lr = 0.1

    @torch.no_grad()
    def bad_step(self, x, y):
        loss = ((x @ self.w - y) ** 2).mean()
        print("loss requires grad?", loss.requires_grad, loss.grad_fn)
        loss.backward()

    def step(self, x, y):
        loss = ((x @ self.w - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            self.w -= self.lr * self.w.grad
        self.w.grad = None
        return loss.item()

t = Trainer()
x, y = torch.randn(4, 3), torch.randn(4)
try:
    t.bad_step(x, y)
except RuntimeError as e:
    print("RuntimeError:", e)
for _ in range(3):
    print(round(t.step(x, y), 5))
print(t.w)
