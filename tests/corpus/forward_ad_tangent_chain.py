# ruff: noqa
# Dual numbers by hand: tangent of exp(x)*x, and a dual tensor that also requires grad.
import torch
import torch.autograd.forward_ad as fwAD
x = torch.tensor([0.0, 1.0, 2.0])
with fwAD.dual_level():
    dx = fwAD.make_dual(x, torch.ones(3))
    y = dx.exp() * dx
    p, t = fwAD.unpack_dual(y)
    p = p.clone()
    t = t.clone()
    z = dx * 3
    t_z = fwAD.unpack_dual(z).tangent.clone()
by_hand = x.exp() * (x + 1)
print(p, t, torch.allclose(t, by_hand), t_z)
w = torch.tensor([1.0, 2.0], requires_grad=True)
with fwAD.dual_level():
    dw = fwAD.make_dual(w, torch.tensor([1.0, 0.0]))
    s = (dw ** 2).sum()
    jv = fwAD.unpack_dual(s).tangent.clone()
s.backward()
print(jv, w.grad)
