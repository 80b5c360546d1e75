# ruff: noqa
# Replacing a layer's Parameter mid-program: the optimizer still holds the old one.
import torch
from torch import nn
torch.manual_seed(2)
lin = nn.Linear(2, 1)
opt = torch.optim.SGD(lin.parameters(), lr=0.5)
old_w = lin.weight
lin.weight = nn.Parameter(torch.ones(1, 2))
x = torch.tensor([[1., 2.]])
loss = lin(x).pow(2).sum()
loss.backward()
opt.step()
print(old_w.grad, lin.weight.grad)
print(old_w, lin.weight)
