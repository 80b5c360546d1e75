# ruff: noqa
# In-place dunder methods called by name on views (a.__imul__(c), __setitem__ with a product that saved
# c, Tensor.__iadd__): the node hidden in CopySlices saved c, then c changed, backward fails; with c left
# alone it runs.
import torch
torch.manual_seed(0)
w = torch.randn(2, 3, requires_grad=True)
c = torch.randn(3)
b = w * 2
b[0].__imul__(c)
c.add_(1)
try:
    b.sum().backward()
except RuntimeError as e:
    print("inplace" in str(e))
h = w * 3
h.__setitem__(1, h[1] * c)
torch.Tensor.__iadd__(h[0], c)
h.sum().backward()
g = w * 4
g[1].__imul__(c)
g.sum().backward()
print(w.grad)
