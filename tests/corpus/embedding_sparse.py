# ruff: noqa
# nn.Embedding(sparse=True): a sparse gradient, and an SGD step with it.
import torch
import torch.nn as nn
torch.manual_seed(0)
emb = nn.Embedding(5, 2, sparse=True)
opt = torch.optim.SGD(emb.parameters(), lr=0.1)
idx = torch.tensor([1, 3, 1])
out = emb(idx)
loss = out.sum()
loss.backward()
g = emb.weight.grad.to_dense()
opt.step()
opt.zero_grad()
print(g)
