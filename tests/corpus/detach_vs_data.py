# ruff: noqa
# detach() shares the version counter (backward fails); .data does not (a silently wrong gradient).
import torch
x = torch.tensor([1., 2.], requires_grad=True)
y = x.exp()
d = y.detach()
d.zero_()
try:
    y.sum().backward()
except RuntimeError as e:
    err = str(e)[:60]
x2 = torch.tensor([1., 2.], requires_grad=True)
y2 = x2.exp()
y2.data.zero_()
s2 = y2.sum()
s2.backward()
