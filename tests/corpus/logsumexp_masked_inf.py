# ruff: noqa
# Masking logits with -inf before softmax; a fully masked row gives NaN, a partly masked one is fine.
import torch
logits = torch.tensor([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]], requires_grad=True)
mask = torch.tensor([[True, False, True], [True, True, True]])
masked = logits.masked_fill(~mask, float("-inf"))
p = torch.softmax(masked, dim=1)
lse = torch.logsumexp(masked, dim=1)
(p[:, 0].sum() + lse.sum()).backward()
print(p, lse, logits.grad)
