# ruff: noqa
# A tensor hook changes the gradient that flows.
import torch
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 3
h = y.register_hook(lambda g: g * 10)
z = (y * y).sum()
z.backward()
h.remove()
