# ruff: noqa
# out= writes into a tensor a node saved: torch.mul(a, b, out=c) after d = c * w saved c, and
# torch.exp(x, out=y) after z = y.sin() saved y (and into a slice of y): each backward fails.
import torch
torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
a, b = torch.randn(3), torch.randn(3)
c = torch.zeros(3)
d = c * w
torch.mul(a, b, out=c)
try:
    d.sum().backward()
except RuntimeError as e:
    print("inplace" in str(e))
x = torch.randn(3)
y = w * 1
z = y.sin()
torch.exp(x.detach(), out=y.detach())
try:
    z.sum().backward()
except RuntimeError as e:
    print("inplace" in str(e))
y2 = w * 2
z2 = y2.cos()
torch.exp(x, out=y2.detach()[1:])
try:
    z2.sum().backward()
except RuntimeError as e:
    print("inplace" in str(e))
e = torch.zeros(3)
f = e * w
kw = {"out": e}
torch.add(a, 1, **kw)
try:
    f.sum().backward()
except RuntimeError as err:
    print("inplace" in str(err))
print(w.grad)
