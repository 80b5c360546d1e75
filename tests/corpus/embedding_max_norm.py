# ruff: noqa
# nn.Embedding with max_norm renormalises the looked-up rows of its weight in place during the forward; padding_idx gets no gradient.
import torch
from torch import nn
torch.manual_seed(0)
emb = nn.Embedding(5, 3, max_norm=1.0, padding_idx=0)
print(emb.weight.norm(dim=1))
idx = torch.tensor([[1, 2, 0], [3, 1, 0]])
vecs = emb(idx)
print(emb.weight.norm(dim=1), emb.weight._version)
loss = vecs.sum()
loss.backward()
print(emb.weight.grad)
