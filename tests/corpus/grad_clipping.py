# ruff: noqa
# Clipping gradients by norm and by value.
import torch
from torch import nn
torch.manual_seed(0)
net = nn.Linear(3, 2)
x = torch.randn(4, 3) * 10
loss = net(x).pow(2).sum()
loss.backward()
norm = nn.utils.clip_grad_norm_(net.parameters(), max_norm=1.0)
nn.utils.clip_grad_value_(net.parameters(), clip_value=0.1)
g = net.weight.grad
