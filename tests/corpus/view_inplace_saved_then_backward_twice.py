# ruff: noqa
# a.mul_(c) on a view, backward once (it frees the node CopySlices wraps), then c changed: the
# second backward fails for the freed graph, not for a stale value.
import torch
torch.manual_seed(0)
w = torch.randn(2, 3, requires_grad=True)
c = torch.randn(6)
b = w * 2
a = b.reshape(-1)
a.mul_(c)
s = a.sum()
s.backward()
c.add_(1)
try:
    s.backward()
except RuntimeError as e:
    print("second time" in str(e))
print(w.grad)
