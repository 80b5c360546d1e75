# ruff: noqa
# Training with module-level state changed through `global`.
import torch
lr = 0.5
w = torch.tensor([1.0, -1.0], requires_grad=True)
history = []
def train_step(x):
    global lr, w
    loss = (w * x).sum() ** 2
    loss.backward()
    with torch.no_grad():
        w = w - lr * w.grad
    w.requires_grad_()
    lr = lr / 2
    history.append(loss.item())
for _ in range(3):
    train_step(torch.tensor([1.0, 2.0]))
print(lr, w, history)
