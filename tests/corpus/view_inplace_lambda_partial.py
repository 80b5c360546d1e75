# ruff: noqa
# In-place calls on views made through a one-line lambda, a partial and torch's own in-place
# function kept in a name (no in-place name in the calling statements' text): the nodes hidden in
# CopySlices saved c, then c changed, backward fails; on a third view, with c left alone, it runs.
import functools
import torch
torch.manual_seed(0)
w = torch.randn(2, 3, requires_grad=True)
c = torch.randn(3)
scale = lambda t, o: t.mul_(o)
b = w * 2
scale(b[0], c)
times = functools.partial(torch.Tensor.mul_, b[1])
times(c)
c.add_(1)
try:
    b.sum().backward()
except RuntimeError as e:
    print("inplace" in str(e))
act = torch.sigmoid_
h = w * 3
act(h[0])
h[0].mul_(2)
try:
    h.sum().backward()
except RuntimeError as e:
    print("inplace" in str(e))
g = w * 4
scale(g[1], c)
act(g[0])
g.sum().backward()
print(w.grad)
