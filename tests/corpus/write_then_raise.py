# ruff: noqa
# In-place writes in a statement that then raises: the trace shows the written values.
import torch
a = torch.tensor([1., 2., 3.])
c = torch.zeros(2)
try:
    torch.cumsum(a.mul_(2), 0, out=c.view(2, 1))
except RuntimeError as e:
    msg = str(e)
try:
    b = a.mul_(2) + torch.ones(5)
except RuntimeError as e:
    msg = str(e)
d = a + 0
