# ruff: noqa
# Magnitude pruning by hand: a mask from |w|, applied with .data *= mask and kept by a gradient hook; slices zeroed under no_grad.
import torch
from torch import nn
torch.manual_seed(0)
layer = nn.Linear(4, 3)
mask = (layer.weight.abs() > layer.weight.abs().median()).float()
layer.weight.data *= mask
handle = layer.weight.register_hook(lambda g: g * mask)
with torch.no_grad():
    layer.bias[0] = 0.0
    layer.weight[:, 0].zero_()
x = torch.randn(5, 4)
loss = layer(x).pow(2).mean()
loss.backward()
print(mask, layer.weight.grad)
print((layer.weight.grad * (1 - mask)).abs().sum().item(), layer.weight._version, layer.bias._version)
handle.remove()
