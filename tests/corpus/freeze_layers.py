# ruff: noqa
# Freezing a layer with requires_grad_(False): it keeps no .grad and is not updated.
import torch
from torch import nn
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 1))
for p in net[0].parameters():
    p.requires_grad_(False)
opt = torch.optim.SGD([p for p in net.parameters() if p.requires_grad], lr=0.1)
x = torch.randn(5, 3)
out = net(x).sum()
out.backward()
opt.step()
frozen = net[0].weight.grad is None
net[0].weight.requires_grad_(True)
out2 = net(x).sum()
out2.backward()
