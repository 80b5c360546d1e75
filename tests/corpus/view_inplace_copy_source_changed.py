# ruff: noqa
# A slice overwritten from another tensor (copy_), which is then changed in place: the copy saves
# nothing, backward runs.
import torch
torch.manual_seed(0)
x = torch.zeros(6)
v = torch.randn(3, requires_grad=True)
s = v * 2
x[:3].copy_(s)
s.add_(1)
x.backward(gradient=torch.ones_like(x))
print(v.grad)
