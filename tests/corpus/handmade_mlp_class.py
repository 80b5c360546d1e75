# ruff: noqa
# A learner's own two-layer network class (no nn.Module) with a step method.
import torch
class TinyNet:
    def __init__(self, seed):
        g = torch.Generator().manual_seed(seed)
        self.w1 = torch.randn(2, 3, generator=g, requires_grad=True)
        self.w2 = torch.randn(3, 1, generator=g, requires_grad=True)
    def params(self):
        return [self.w1, self.w2]
    def __call__(self, x):
        h = torch.relu(x @ self.w1)
        return h @ self.w2
    def step(self, lr):
        with torch.no_grad():
            for p in self.params():
                p -= lr * p.grad
                p.grad.zero_()
net = TinyNet(0)
x = torch.tensor([[1., 2.], [0.5, -1.]])
y = torch.tensor([[1.], [0.]])
for epoch in range(3):
    loss = ((net(x) - y) ** 2).mean()
    loss.backward()
    net.step(0.1)
print(loss, net.w2)
