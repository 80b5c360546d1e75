# ruff: noqa
# An nn.Module whose weight is a property computed from a raw Parameter.
import torch
from torch import nn
class PositiveLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.raw = nn.Parameter(torch.tensor([[-1.0, 0.5]]))
        self.register_parameter("bias", nn.Parameter(torch.zeros(1)))
    @property
    def weight(self):
        return nn.functional.softplus(self.raw)
    def forward(self, x):
        return x @ self.weight.t() + self.bias
m = PositiveLinear()
x = torch.tensor([[1.0, 2.0]])
out = m(x)
out.sum().backward()
print(m.weight, m.raw.grad, m.bias.grad, [n for n, _ in m.named_parameters()])
