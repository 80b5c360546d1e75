# ruff: noqa
# A symmetric-weight parametrization: the layer keeps weight = A + A.T from its original, training steps it, then remove_parametrizations bakes the symmetric weight in.
import torch
from torch import nn
from torch.nn.utils import parametrize

class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)

torch.manual_seed(0)
layer = nn.Linear(3, 3)
parametrize.register_parametrization(layer, "weight", Symmetric())
print(torch.allclose(layer.weight, layer.weight.T))
opt = torch.optim.SGD(layer.parameters(), lr=0.1)
x = torch.randn(2, 3)
loss = layer(x).pow(2).sum()
loss.backward()
opt.step()
orig = layer.parametrizations.weight.original
print(orig.grad)
parametrize.remove_parametrizations(layer, "weight", leave_parametrized=True)
print(layer.weight, type(layer.weight).__name__, layer.weight is orig)
