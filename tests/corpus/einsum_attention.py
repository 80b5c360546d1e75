# ruff: noqa
# A single attention head with einsum and softmax, gradients to the queries.
import torch
torch.manual_seed(4)
q = torch.randn(2, 3, requires_grad=True)
k = torch.randn(4, 3)
v = torch.randn(4, 2)
scores = torch.einsum("qd,kd->qk", q, k) / 3 ** 0.5
attn = scores.softmax(dim=-1)
out = attn @ v
loss = out.pow(2).sum()
loss.backward()
print(attn.sum(-1), q.grad)
