# ruff: noqa
# out= writes into tensors no node saved (a node that saved nothing, or a fresh result): backward runs.
import torch
torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
a, b = torch.randn(3), torch.randn(3)
c = torch.zeros(3)
d = c + w  # AddBackward0 saves no tensor
torch.mul(a, b, out=c)
d.sum().backward()
y = w * 1
z = y * 3  # saves the scalar, not y
torch.exp(a, out=y.detach())
z.sum().backward()
s = torch.zeros(3)
r = w * s
torch.exp(a, out=a)
r.sum().backward()
print(w.grad, c, a)
