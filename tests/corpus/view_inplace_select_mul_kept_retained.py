# ruff: noqa
# An in-place product on a selected row, backward twice with retain_graph and nothing changed:
# both run.
import torch
torch.manual_seed(0)
w = torch.randn(2, 3, requires_grad=True)
c = torch.randn(3)
b = w * 2
b[0].mul_(c)
s = b.sum()
s.backward(retain_graph=True)
s.backward()
print(w.grad)
