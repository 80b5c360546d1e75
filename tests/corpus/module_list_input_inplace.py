# ruff: noqa
# Modules given their tensors inside a list or a tuple, which their forward changes in place: a
# sigmoid's saved result made in the calling statement (backward fails), a view's in-place product
# whose hidden node saved the other tensor of the tuple, then changed (fails), and the same modules
# on inputs no node saved (runs).
import torch
from torch import nn
torch.manual_seed(0)
class Scale(nn.Module):
    def forward(self, xs):
        xs[0].mul_(2)
        return xs[0] + xs[1]
class Bump(nn.Module):
    pass
Bump.forward = lambda self, pair: pair[0].mul_(pair[1])  # one line: runs inside the calling statement
scale, bump = Scale(), Bump()
x = torch.randn(4, requires_grad=True)
b = torch.randn(4)
y = scale([x.sigmoid(), b])
try:
    y.sum().backward()
except RuntimeError as e:
    print("inplace" in str(e))
z = bump((x.exp(), b))
try:
    z.sum().backward()
except RuntimeError as e:
    print("inplace" in str(e))
h = x * 2
v = h.view(2, 2)[0]
c = torch.randn(2)
bump((v, c))
c.add_(1)
try:
    h.sum().backward()
except RuntimeError as e:
    print("inplace" in str(e))
h2 = x * 3
bump([h2.view(2, 2)[1], torch.ones(2)])
h2.sum().backward()
u = scale([x * 1, b])
u.sum().backward()
print(x.grad)
