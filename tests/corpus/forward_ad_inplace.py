# ruff: noqa
# Forward-mode AD through an in-place change of a dual tensor.
import torch
import torch.autograd.forward_ad as fwAD
x = torch.tensor([1., 2., 3.])
v = torch.ones(3)
with fwAD.dual_level():
    d = fwAD.make_dual(x.clone(), v)
    d.mul_(2)
    e = d.exp()
    p, t = fwAD.unpack_dual(e)
    tangent = t.clone()
    primal = p.clone()
print(tangent, primal)
