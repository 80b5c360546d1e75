# ruff: noqa
# An in-place method of a view kept in a list and in an object's attribute, then called from there
# (ops[0](c), box.f(c)): the node hidden in CopySlices saved c, then c changed, backward fails.
import types
import torch
torch.manual_seed(0)
w = torch.randn(2, 3, requires_grad=True)
c = torch.randn(3)
b = w * 2
ops = [b[0].mul_]
ops[0](c)
c.add_(1)
try:
    b.sum().backward()
except RuntimeError as e:
    print("inplace" in str(e))
h = w * 3
box = types.SimpleNamespace(f=h[1].mul_)
box.f(c)
c.add_(1)
try:
    h.sum().backward()
except RuntimeError as e:
    print("inplace" in str(e))
