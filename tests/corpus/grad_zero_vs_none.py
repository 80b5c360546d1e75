# ruff: noqa
# x.grad.zero_() keeps the same tensor; x.grad = None makes backward allocate a new one.
import torch
x = torch.tensor([1., 2.], requires_grad=True)
(x * 3).sum().backward()
g = x.grad
(x * 3).sum().backward()
x.grad.zero_()
same_after_zero = g is x.grad
(x ** 2).sum().backward()
x.grad = None
(x ** 2).sum().backward()
same_after_none = g is x.grad
print(g, x.grad, same_after_zero, same_after_none)
