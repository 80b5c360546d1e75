# ruff: noqa
# A small class with methods and a property holding tensors.
import torch
class Affine:
    def __init__(self, n):
        self.w = torch.ones(n, requires_grad=True)
        self.b = torch.zeros(n, requires_grad=True)
        self.calls = 0
    @property
    def params(self):
        return [self.w, self.b]
    def __call__(self, x):
        self.calls += 1
        out = x * self.w + self.b
        return out
    def step(self, lr):
        with torch.no_grad():
            for p in self.params:
                p -= lr * p.grad
                p.grad = None
layer = Affine(2)
x = torch.tensor([1., 3.])
for _ in range(2):
    y = layer(x).pow(2).sum()
    y.backward()
    layer.step(0.1)
