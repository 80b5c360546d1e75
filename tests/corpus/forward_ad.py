# ruff: noqa
# Forward-mode AD.
import torch
import torch.autograd.forward_ad as fwAD
x = torch.tensor([1., 2.])
v = torch.tensor([1., 0.])
with fwAD.dual_level():
    d = fwAD.make_dual(x, v)
    out = d.sin() * d
    tangent = fwAD.unpack_dual(out).tangent.clone()
