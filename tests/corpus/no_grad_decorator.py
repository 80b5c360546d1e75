# ruff: noqa
# A @torch.no_grad()-decorated function: one step for its definition, its body's steps when called.
import torch
@torch.no_grad()
def scale(t):
    u = t * 2
    return u
x = torch.tensor([1., 2.], requires_grad=True)
y = scale(x)
z = x * 3
