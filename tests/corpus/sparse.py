# ruff: noqa
# Sparse gradients of an Embedding.
import torch
from torch import nn
torch.manual_seed(0)
emb = nn.Embedding(5, 2, sparse=True)
idx = torch.tensor([1, 3, 1])
out = emb(idx).sum()
out.backward()
g = emb.weight.grad.to_dense()
