# ruff: noqa
# A causal attention mask with tril: future positions get no gradient through the scores.
import torch
torch.manual_seed(0)
T = 3
q = torch.randn(T, 2, requires_grad=True)
k = torch.randn(T, 2, requires_grad=True)
scores = q @ k.T
mask = torch.tril(torch.ones(T, T)).bool()
scores = scores.masked_fill(~mask, float("-inf"))
att = torch.softmax(scores, dim=-1)
att[0].sum().backward()
print(att)
print(k.grad)
