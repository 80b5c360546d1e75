# ruff: noqa
# The torch.where trap: the branch not taken still sends NaN into the gradient.
import torch
x = torch.tensor([-1.0, 0.0, 4.0], requires_grad=True)
y = torch.where(x > 0, x.sqrt(), torch.zeros_like(x))
y.sum().backward()
bad = x.grad.clone()
x.grad = None
safe = torch.where(x > 0, x, torch.ones_like(x)).sqrt()
y2 = torch.where(x > 0, safe, torch.zeros_like(x))
y2.sum().backward()
print(y, bad, x.grad)
