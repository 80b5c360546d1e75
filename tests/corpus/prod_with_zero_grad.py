# ruff: noqa
# The gradient of a product with a zero in it: prod, cumprod and the division trick that gives NaN.
import torch
x = torch.tensor([2.0, 0.0, 3.0], requires_grad=True)
p = x.prod()
p.backward()
print(p, x.grad)
x.grad = None
tricky = (p.detach() / x)
print(tricky)
cp = torch.cumprod(x, dim=0)
cp.sum().backward()
print(cp, x.grad)
x.grad = None
logs = torch.log(x).sum().exp()
logs.backward()
print(logs, x.grad)
