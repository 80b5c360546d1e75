# ruff: noqa
# Views whose base no name holds: torch.arange(6.).view(2, 3), and the gradient a hook keeps from sum()'s backward (an expand of the seed 1.).
import torch
grid = torch.arange(6.).view(2, 3)
print(grid._base is not None)
row = torch.ones(4)[1:]
kept = {}
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = x * 2
y.register_hook(lambda g: kept.update(y=g))
y.sum().backward()
print(kept["y"], kept["y"]._base, x.grad)
