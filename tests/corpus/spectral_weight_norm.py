# ruff: noqa
# spectral_norm on a GAN critic's layer (power-iteration buffers updated in each forward) and weight_norm's g and v parameters.
import torch
from torch import nn
torch.manual_seed(0)
layer = nn.utils.spectral_norm(nn.Linear(3, 2))
print(sorted(n for n, _ in layer.named_parameters()), sorted(n for n, _ in layer.named_buffers()))
u0 = layer.weight_u.clone()
x = torch.randn(4, 3)
out = layer(x)
print(torch.equal(u0, layer.weight_u), layer.weight_u._version)
out.sum().backward()
print(layer.weight_orig.grad)
wn = nn.utils.weight_norm(nn.Linear(2, 2))
y = wn(torch.ones(1, 2)).sum()
y.backward()
print(wn.weight_g.grad.squeeze(), wn.weight_v.grad)
