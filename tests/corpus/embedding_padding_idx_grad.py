# ruff: noqa
# Embedding(padding_idx=0): the padding row is zero and gets no gradient, even when used.
import torch
from torch import nn
torch.manual_seed(4)
emb = nn.Embedding(4, 2, padding_idx=0)
tokens = torch.tensor([[1, 0, 2, 0], [3, 3, 0, 1]])
e = emb(tokens)
loss = (e * torch.arange(1.0, 3.0)).sum()
loss.backward()
print(emb.weight[0], emb.weight.grad)
with torch.no_grad():
    emb.weight[0].fill_(5.0)
print(emb(torch.tensor([0])))
