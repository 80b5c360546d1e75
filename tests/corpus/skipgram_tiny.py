# ruff: noqa
# A tiny skip-gram: two nn.Embedding tables, dot products, negative sampling with BCE, two SGD steps.
import torch
from torch import nn
torch.manual_seed(0)
corpus = "the cat sat on the mat".split()
vocab = sorted(set(corpus))
idx = {w: i for i, w in enumerate(vocab)}
pairs = [(idx[corpus[i]], idx[corpus[j]]) for i in range(len(corpus)) for j in (i - 1, i + 1) if 0 <= j < len(corpus)]
center = nn.Embedding(len(vocab), 3)
context = nn.Embedding(len(vocab), 3)
opt = torch.optim.SGD(list(center.parameters()) + list(context.parameters()), lr=0.5)
c = torch.tensor([p[0] for p in pairs])
o = torch.tensor([p[1] for p in pairs])
neg = torch.randint(0, len(vocab), (len(pairs),))
for step in range(2):
    opt.zero_grad()
    pos_score = (center(c) * context(o)).sum(-1)
    neg_score = (center(c) * context(neg)).sum(-1)
    loss = nn.functional.binary_cross_entropy_with_logits(pos_score, torch.ones_like(pos_score)) \
        + nn.functional.binary_cross_entropy_with_logits(neg_score, torch.zeros_like(neg_score))
    loss.backward()
    opt.step()
    print(step, loss.item())
print(center.weight.grad[idx["the"]], center.weight[idx["cat"]])
