# ruff: noqa
# flip, roll and pad only move values around; the gradient is moved back the same way.
import torch
import torch.nn.functional as F
x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
w = torch.tensor([1.0, 10.0, 100.0, 1000.0])
(torch.flip(x, dims=[0]) * w).sum().backward()
print(x.grad)
x.grad = None
(torch.roll(x, shifts=1) * w).sum().backward()
print(x.grad)
x.grad = None
p = F.pad(x, (1, 2), value=7.0)
(p * torch.arange(7.0)).sum().backward()
print(p, x.grad)
