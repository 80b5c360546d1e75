# ruff: noqa
# An out= write in the same statement as an in-place call is no change "through a view".
import torch
a = torch.tensor([1., 2., 3.])
c = torch.zeros(3)
torch.cumsum(a.mul_(2), 0, out=c)
v = a[1:]
v.add_(1)
d = torch.tensor([-0.0, 1.0]) * torch.tensor([1.0, -0.0])
