# ruff: noqa
# index_fill_ and scatter_ on a computed tensor: the overwritten positions stop passing gradient.
import torch
x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
h = x * 2
h.index_fill_(0, torch.tensor([1]), -1.0)
src = torch.tensor([9.0, 9.0])
h.scatter_(0, torch.tensor([2, 3]), src)
print(h, h._version)
h.sum().backward()
print(x.grad)
