# ruff: noqa
# Attention-style masking with masked_fill(-inf): a fully masked row makes the softmax NaN, yet masked_fill sends 0 back to every masked place, so scores.grad stays finite; -1e9 gives a uniform row instead.
import torch
scores = torch.tensor([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]], requires_grad=True)
mask = torch.tensor([[True, True, False], [False, False, False]])
masked = scores.masked_fill(~mask, float("-inf"))
attn = torch.softmax(masked, dim=-1)
print(attn)
attn[0].sum().backward(retain_graph=True)
print(scores.grad)
scores.grad = None
clean = torch.nan_to_num(attn, nan=0.0)
(clean * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
print(clean, scores.grad)
safe = scores.masked_fill(~mask, -1e9)
a2 = torch.softmax(safe, dim=-1)
scores.grad = None
(a2 * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
print(a2, scores.grad, torch.isnan(scores.grad).any().item())
