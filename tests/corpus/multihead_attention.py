# ruff: noqa
# MultiheadAttention forward and backward.
import torch
from torch import nn
torch.manual_seed(0)
mha = nn.MultiheadAttention(4, 2, batch_first=True)
q = torch.randn(1, 3, 4, requires_grad=True)
out, weights = mha(q, q, q)
loss = out.sum() + weights.sum()
loss.backward()
