# ruff: noqa
# Parameter sharing: one nn.Linear placed twice in a Sequential; a change to one is a change to both, and grads add up.
import torch
from torch import nn
torch.manual_seed(0)
shared = nn.Linear(4, 4)
net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), shared, nn.ReLU(), shared, nn.ReLU(), nn.Linear(4, 1))
X = torch.rand(2, 3)
print(net(X))
print(net[2].weight.data[0] == net[4].weight.data[0])
net[2].weight.data[0, 0] = 100
print(net[2].weight.data[0] == net[4].weight.data[0])
print(len(list(net.parameters())), net[2].weight is net[4].weight)
out = net(X).sum()
out.backward()
print(shared.weight.grad[0], net[4].bias.grad)
