# ruff: noqa
# Integer and bool tensors: no gradients, in-place arithmetic, masks.
import torch
i = torch.arange(6)
j = i * 3 // 2
i += 1
mask = i % 2 == 0
mask.logical_not_()
k = torch.where(mask, i, -i)
n = mask.sum()
b = torch.tensor([True, False])
b &= torch.tensor([True, True])
x = torch.tensor([1., 2., 3., 4., 5., 6.], requires_grad=True)
y = (x * mask).sum()
y.backward()
try:
    bad = torch.tensor([1, 2], requires_grad=True)
except RuntimeError as e:
    msg = str(e)
