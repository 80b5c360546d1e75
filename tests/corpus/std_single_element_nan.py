# ruff: noqa
# std of a batch of one: the value is NaN (unbiased) and so is the gradient; correction=0 fixes it.
import torch
x = torch.tensor([[2.0, 4.0]], requires_grad=True)
s = x.std(dim=0)
print(s)
s.sum().backward()
print(x.grad)
x.grad = None
s0 = x.std(dim=0, correction=0)
s0.sum().backward()
print(s0, x.grad)
x.grad = None
s1 = x.std(dim=1)
s1.sum().backward()
print(s1, x.grad)
