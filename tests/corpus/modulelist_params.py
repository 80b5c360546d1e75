# ruff: noqa
# A custom nn.Module with ModuleList and ParameterList, a plain list that hides its layers from .parameters(), and named_parameters().
import torch
from torch import nn
torch.manual_seed(0)

class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(2, 3), nn.Linear(3, 1)])
        self.scales = nn.ParameterList([nn.Parameter(torch.ones(3)), nn.Parameter(torch.ones(1))])
        self.hidden_list = [nn.Linear(2, 2)]

    def forward(self, x):
        for layer, scale in zip(self.layers, self.scales):
            x = torch.relu(layer(x)) * scale
        return x

net = MLP()
print([n for n, _ in net.named_parameters()])
print(len(list(net.parameters())))
x = torch.randn(4, 2)
out = net(x).sum()
out.backward()
print(net.scales[0].grad, net.layers[1].weight.grad)
print(net.hidden_list[0].weight.grad)
