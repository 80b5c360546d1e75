# ruff: noqa
# A siamese encoder called on both inputs of each pair (one module, two calls), with a contrastive loss and a margin.
import torch
from torch import nn
torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
a = torch.randn(4, 3)
b = torch.randn(4, 3)
same = torch.tensor([1.0, 0.0, 1.0, 0.0])
za = encoder(a)
zb = encoder(b)
d = torch.nn.functional.pairwise_distance(za, zb)
margin = 1.0
loss = (same * d.pow(2) + (1 - same) * torch.clamp(margin - d, min=0).pow(2)).mean()
loss.backward()
print(d, loss.item())
print(encoder[0].weight.grad.abs().sum().item() > 0, encoder[2].bias.grad)
