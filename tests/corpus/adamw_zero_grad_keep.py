# ruff: noqa
# AdamW, with zero_grad(set_to_none=False) keeping .grad as zeros.
import torch
from torch import nn
torch.manual_seed(0)
layer = nn.Linear(2, 2)
opt = torch.optim.AdamW(layer.parameters(), lr=0.01, weight_decay=0.1)
x = torch.randn(3, 2)
for step in range(2):
    opt.zero_grad(set_to_none=False)
    loss = layer(x).pow(2).mean()
    loss.backward()
    opt.step()
opt.zero_grad(set_to_none=False)
