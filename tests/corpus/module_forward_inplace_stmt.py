# ruff: noqa
# A module whose forward has several statements, called inside an in-place statement.
import torch
import torch.nn as nn
torch.manual_seed(0)
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
    def forward(self, x):
        h = self.lin(x)
        h = h.relu()
        out = h * 2
        return out
m = Block()
x = torch.randn(3, 2)
y = m(x).add_(1)
y[0] = m(x)[1]
buf = torch.zeros(3, 2)
torch.add(m(x), 1, out=buf)
y.sum().backward()
print(y, buf, m.lin.weight.grad)
