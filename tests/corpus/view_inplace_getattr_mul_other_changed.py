# ruff: noqa
# An in-place product on a view, called through getattr and through a bound method kept in a name
# (no in-place name in the statement's text): MulBackward0 inside CopySlices saved c, then c changed,
# backward fails. The same with the method kept and c left alone runs fine.
import torch
torch.manual_seed(0)
w = torch.randn(2, 3, requires_grad=True)
b = w * 2
a = b.reshape(-1)
c = torch.randn(6)
getattr(a, "mul_")(c)
c.add_(1)
try:
    a.backward(gradient=torch.ones_like(a))
    print(w.grad)
except RuntimeError as e:
    print("inplace" in str(e))
b2 = w * 3
a2 = b2.reshape(-1)
c2 = torch.randn(6)
f = a2.mul_
f(c2)
g = c2.add_
g(1)
try:
    a2.backward(gradient=torch.ones_like(a2))
    print(w.grad)
except RuntimeError as e:
    print("inplace" in str(e))
b3 = w * 4
a3 = b3.reshape(-1)
c3 = torch.randn(6)
h = a3.mul_
h(c3)
a3.backward(gradient=torch.ones_like(a3))
print(w.grad)
