# ruff: noqa
# repeat_interleave copies each element k times; its gradient sums the copies back.
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
r = x.repeat_interleave(2)
weights = torch.arange(6.0)
(r * weights).sum().backward()
print(r, x.grad)
x.grad = None
r2 = x.repeat_interleave(torch.tensor([1, 0, 3]))
r2.sum().backward()
print(r2, x.grad)
