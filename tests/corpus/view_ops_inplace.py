# ruff: noqa
# transpose, unbind and expand views, and in-place changes through them.
import torch
x = torch.arange(6.).reshape(2, 3).requires_grad_()
y = x * 1
t = y.t()
t[0, 1] = 100.
r0, r1 = y.unbind(0)
try:
    r1.mul_(2)
except RuntimeError as e:
    err = str(e)[:40]
e = torch.tensor([1., 2.]).view(2, 1).expand(2, 3)
s = (y * e).sum()
s.backward()
flat = x.detach().view(-1)
flat[0] = -1.
