# ruff: noqa
# enable_grad inside no_grad, and the decorator forms.
import torch
x = torch.tensor([1., 2.], requires_grad=True)
with torch.no_grad():
    a = x * 2
    with torch.enable_grad():
        b = x * 3
    c = x * 4
@torch.enable_grad()
def make(t):
    return t ** 2
with torch.no_grad():
    d = make(x)
print(a.requires_grad, b.requires_grad, c.requires_grad, d.requires_grad)
(b.sum() + d.sum()).backward()
print(x.grad)
