# ruff: noqa
# scaled_dot_product_attention(is_causal=True) against a hand-written causal softmax; same gradients.
import math
import torch
import torch.nn.functional as F
torch.manual_seed(9)
q = torch.randn(1, 3, 4, requires_grad=True)
k = torch.randn(1, 3, 4, requires_grad=True)
v = torch.randn(1, 3, 4, requires_grad=True)
out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
out.sum().backward()
gq = q.grad.clone()
q.grad = None
scores = q @ k.transpose(-2, -1) / math.sqrt(4)
mask = torch.ones(3, 3).tril().bool()
scores = scores.masked_fill(~mask, float("-inf"))
att = scores.softmax(-1)
manual = att @ v
manual.sum().backward()
print(torch.allclose(out, manual, atol=1e-6), torch.allclose(gq, q.grad, atol=1e-6), att[0, 0])
