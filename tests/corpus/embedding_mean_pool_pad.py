# ruff: noqa
# Bag-of-words classifier: nn.Embedding with padding_idx, mean over real tokens via a mask, a Linear head, two SGD steps.
import torch
import torch.nn as nn
torch.manual_seed(7)
vocab, dim = 10, 4
emb = nn.Embedding(vocab, dim, padding_idx=0)
head = nn.Linear(dim, 2)
batch = torch.tensor([[3, 5, 2, 0], [7, 1, 0, 0], [4, 4, 9, 8]])
labels = torch.tensor([0, 1, 1])
opt = torch.optim.SGD(list(emb.parameters()) + list(head.parameters()), lr=0.5)
for epoch in range(2):
    opt.zero_grad()
    e = emb(batch)
    mask = (batch != 0).unsqueeze(-1).float()
    pooled = (e * mask).sum(1) / mask.sum(1)
    logits = head(pooled)
    loss = nn.functional.cross_entropy(logits, labels)
    loss.backward()
    print(epoch, loss.item(), emb.weight.grad[0], emb.weight.grad[4])
    opt.step()
print(emb.weight[0], pooled.shape)
