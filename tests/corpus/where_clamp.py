# ruff: noqa
# torch.where and clamp_: clamp saves its input, so clamp_ after a save is stale.
import torch
x = torch.tensor([-1., 0.5, 2.], requires_grad=True)
y = torch.where(x > 0, x * 2, x ** 2)
z = y * 1
z.clamp_(min=0., max=3.)
u = z.sigmoid()
z.clamp_(max=1.)
total = u.sum()
total.backward()
