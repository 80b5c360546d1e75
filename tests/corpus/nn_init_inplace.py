# ruff: noqa
# nn.init functions write parameters in place under no_grad; the learner re-initialises a layer.
import torch
import torch.nn as nn
torch.manual_seed(0)
layer = nn.Linear(3, 2)
print(layer.weight._version)
nn.init.zeros_(layer.bias)
nn.init.xavier_uniform_(layer.weight)
print(layer.weight._version, layer.bias._version, layer.bias)
out = layer(torch.ones(1, 3)).sum()
nn.init.constant_(layer.weight, 0.5)
out.backward()
print(layer.weight.grad, layer.bias.grad)
