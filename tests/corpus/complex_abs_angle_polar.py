# ruff: noqa
# Complex autograd: abs, angle, polar and view_as_real; the gradient is conj-Wirtinger.
import torch
z = torch.tensor([3.0 + 4.0j, -1.0 + 1.0j], requires_grad=True)
mag = z.abs()
ang = z.angle()
loss = (mag + ang).sum()
loss.backward()
print(mag, ang, z.grad)
r = torch.tensor([2.0, 1.0], requires_grad=True)
th = torch.tensor([0.5, -0.25], requires_grad=True)
p = torch.polar(r, th)
re_im = torch.view_as_real(p)
re_im[:, 0].sum().backward()
print(p, r.grad, th.grad)
