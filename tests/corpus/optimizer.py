# ruff: noqa
# An optimizer loop.
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(2, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
x = torch.randn(4, 2)
t = torch.randn(4, 1)
for step in range(3):
    opt.zero_grad()
    loss = ((model(x) - t) ** 2).mean()
    loss.backward()
    opt.step()
