# ruff: noqa
# Weight tying: the embedding and the output layer share one Parameter.
import torch
from torch import nn
torch.manual_seed(1)
emb = nn.Embedding(5, 3)
head = nn.Linear(3, 5, bias=False)
head.weight = emb.weight
same = head.weight is emb.weight
tokens = torch.tensor([1, 3])
h = emb(tokens)
logits = head(h)
loss = nn.functional.cross_entropy(logits, torch.tensor([3, 1]))
loss.backward()
g = emb.weight.grad
print(same, g.shape, torch.equal(g, head.weight.grad))
