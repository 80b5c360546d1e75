# ruff: noqa
# An in-place op that writes, then raises: the trace shows the written value.
import torch
a = torch.tensor([1., 2., 3.])
c = torch.zeros(2)
try:
    torch.cumsum(a.mul_(2), 0, out=c.view(2, 1))
except RuntimeError as e:
    msg = str(e)
b = a + 0
