# ruff: noqa
# Embedding, LayerNorm and a Linear head trained one step.
import torch
from torch import nn
torch.manual_seed(0)
emb = nn.Embedding(10, 4, padding_idx=0)
ln = nn.LayerNorm(4)
head = nn.Linear(4, 2)
tokens = torch.tensor([[1, 2, 0], [3, 3, 9]])
h = ln(emb(tokens))
logits = head(h.mean(1))
loss = nn.functional.cross_entropy(logits, torch.tensor([0, 1]))
loss.backward()
pad_grad = emb.weight.grad[0]
