# ruff: noqa
# index_add_ and scatter_ into non-leaf buffers, then backward through them.
import torch
src = torch.tensor([1., 2., 3., 4.], requires_grad=True)
buckets = torch.zeros(2) * src.sum()
idx = torch.tensor([0, 1, 0, 1])
buckets.index_add_(0, idx, src * 2)
out = torch.zeros(4) + 0 * src
out.scatter_(0, torch.tensor([3, 2, 1, 0]), src ** 2)
total = buckets.sum() + (out * torch.arange(4.)).sum()
total.backward()
print(src.grad)
