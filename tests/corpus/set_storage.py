# ruff: noqa
# set_ points a tensor at other memory.
import torch
a = torch.tensor([1., 2., 3.])
b = torch.tensor([4., 5.])
a.set_(b)
c = a + 1
