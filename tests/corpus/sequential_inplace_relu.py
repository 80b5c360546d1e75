# ruff: noqa
# Sigmoid saves its result; ReLU(inplace=True) changes it inside the same forward call.
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 3), nn.Sigmoid(), nn.ReLU(inplace=True))
x = torch.randn(2, 3)
out = model(x)
loss = out.sum()
loss.backward()
