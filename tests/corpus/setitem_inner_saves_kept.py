# ruff: noqa
# Index writes whose inner op saved a tensor that stays as it was (or saved none): backward runs.
import torch
torch.manual_seed(0)
x = torch.randn(5, requires_grad=True)
w = torch.randn(2, requires_grad=True)
t = x * 1
idx = torch.tensor([0, 2])
t[idx] = w * 2
t.sum().backward()
t = x * 1
mask = t > 0
t[mask] = 0.
mask2 = mask.clone()
mask2.logical_not_()
t.sum().backward()
t = x * 1
c = torch.randn(2)
t[0:2] *= c
t.sum().backward()
t = x * 1
wx = w * x[:2]
t[0:2] += wx
wx.add_(1)  # AddBackward0 inside CopySlices saved nothing; MulBackward0 saved w and x's slice, not wx
t.sum().backward()
t = x * 1
t[0:2] = t[0:2].sigmoid()
t.sum().backward()
t = x * 1
t[0] = 3.
t[idx] += 1
t.sum().backward()
print(x.grad, w.grad)
