# ruff: noqa
# In-place calls through the operator module on views (operator.imul, an imported iadd, setitem with
# a product that saved c): the nodes hidden inside CopySlices saved c, then c changed, each backward
# fails; the same with c left alone runs.
import operator
from operator import imul, setitem
import torch
torch.manual_seed(0)
w = torch.randn(2, 3, requires_grad=True)
c = torch.randn(3)
b = w * 2
operator.imul(b[0], c)
c.add_(1)
try:
    b.sum().backward()
except RuntimeError as e:
    print("inplace" in str(e))
h = w * 3
imul(h[1], c)
c.mul_(2)
try:
    h.sum().backward()
except RuntimeError as e:
    print("inplace" in str(e))
g = w * 4
operator.setitem(g, 0, g[0].exp())
g2 = w * 5
imul(g2[0], c)
operator.iadd(g2[1], c)
g2.sum().backward()
g.sum().backward()
print(w.grad)
