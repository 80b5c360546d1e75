# ruff: noqa
# x += 1 changes the object in place; x = x + 1 makes a new one.
import torch
a = torch.tensor([1., 2.], requires_grad=True)
b = a * 2
alias = b
b += 1
b = b + 1
c = alias * b
del alias
c.sum().backward()
