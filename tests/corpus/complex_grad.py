# ruff: noqa
# Complex tensors: abs, angle, and in-place on a complex intermediate.
import torch
z = torch.tensor([1 + 1j, -2 + 0.5j], requires_grad=True)
w = z * (2 - 1j)
m = w.abs()
ang = w.angle()
w.mul_(1j)
r = (m.sum() + ang.sum())
r.backward()
c = torch.view_as_real(z.detach())
