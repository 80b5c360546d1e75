# ruff: noqa
# A view made under no_grad whose base is then changed in place: PyTorch refuses to say
# whether it is a leaf or what its grad_fn is; the program goes on.
import torch
torch.manual_seed(0)
a = torch.randn(2, 3, requires_grad=True)
b = torch.exp(a)
a = torch.exp(a)
with torch.no_grad():
    a = a.reshape(-1)
    a.add_(a)
try:
    leaf = a.is_leaf
except RuntimeError as e:
    leaf = str(e)[:30]
c = b * 2
print(leaf, c.sum())
