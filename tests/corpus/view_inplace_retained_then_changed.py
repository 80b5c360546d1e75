# ruff: noqa
# A retained graph keeps the node inside CopySlices: c changed after the first backward makes the
# second one fail.
import torch
torch.manual_seed(0)
w = torch.randn(2, 3, requires_grad=True)
c = torch.randn(3)
b = w * 2
b[0].mul_(c)
s = b.sum()
s.backward(retain_graph=True)
c.add_(1)
try:
    s.backward()
except RuntimeError as e:
    print("inplace" in str(e))
print(w.grad)
