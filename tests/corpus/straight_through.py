# ruff: noqa
# The straight-through estimator: x + (x.round() - x).detach() rounds forward and passes the gradient unchanged backward.
import torch
x = torch.tensor([0.2, 1.7, -0.6], requires_grad=True)
hard = x.round()
print(hard.requires_grad, hard.grad_fn.name())
hard.sum().backward()
print("round's gradient:", x.grad)
x.grad = None
ste = x + (x.round() - x).detach()
print(ste, ste.grad_fn.name())
(ste * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
print("straight-through gradient:", x.grad)
y = torch.sign(x)
z = x - x.detach() + y.detach()
z.sum().backward()
print(x.grad)
