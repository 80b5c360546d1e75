# ruff: noqa
# One Parameter used by two modules and twice in one forward: its .grad sums all three uses.
import torch
from torch import nn
shared = nn.Parameter(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
class Block(nn.Module):
    def __init__(self, w):
        super().__init__()
        self.w = w
    def forward(self, x):
        return x @ self.w
b1, b2 = Block(shared), Block(shared)
x = torch.tensor([[1.0, 1.0]])
out = b2(b1(x)) + x @ shared
out.sum().backward()
n_params = len(list(nn.ModuleList([b1, b2]).parameters()))
print(shared.grad, n_params)
