# ruff: noqa
# Gradient accumulation over micro-batches: .grad sums until the optimizer steps.
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data = torch.randn(4, 3)
target = torch.randn(4, 1)
accum = 2
for i, (xb, yb) in enumerate(zip(data.split(1), target.split(1))):
    loss = ((model(xb) - yb) ** 2).mean() / accum
    loss.backward()
    if (i + 1) % accum == 0:
        opt.step()
        opt.zero_grad()
