# ruff: noqa
# Two different functions of one name running at once (an outer module's forward calling an inner
# module's forward): each call's names are its own, as for recursion.
import torch
class Inner(torch.nn.Module):
    def forward(self, h):
        g = h * 2
        return g
class Outer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()
    def forward(self, h):
        k = h + 1
        out = self.inner(k)
        return out
x = torch.tensor([1., 2.], requires_grad=True)
y = Outer()(x)
y.sum().backward()
print(y, x.grad)
