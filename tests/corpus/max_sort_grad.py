# ruff: noqa
# Gradients through max, topk and sort reach only the chosen entries.
import torch
x = torch.tensor([3., 1., 4., 1., 5.], requires_grad=True)
m, i = x.max(dim=0)
top, ti = x.topk(2)
s, si = x.sort()
loss = m + top.sum() * 2 + (s * torch.arange(5.)).sum()
loss.backward()
print(i, ti, si, x.grad)
