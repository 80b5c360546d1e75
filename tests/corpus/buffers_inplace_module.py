# ruff: noqa
# A module that changes its own buffer and parameter in forward.
import torch
import torch.nn as nn
class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("seen", torch.zeros(2))
        self.scale = nn.Parameter(torch.tensor([1., 2.]))
    def forward(self, x):
        self.seen += x.detach()
        return x * self.scale
m = Counter()
for k in range(2):
    y = m(torch.tensor([1., 1.]) * (k + 1))
    y.sum().backward()
print(m.seen, m.scale.grad)
