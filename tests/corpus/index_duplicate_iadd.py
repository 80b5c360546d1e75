# ruff: noqa
# x[idx] += 1 with a repeated index adds only once; index_put_ with accumulate=True and index_add_ add every time; the gradient through a gather counts repeats.
import torch
counts = torch.zeros(4)
idx = torch.tensor([0, 2, 2, 3, 2])
counts[idx] += 1
print(counts)
counts2 = torch.zeros(4)
counts2.index_put_((idx,), torch.ones(5), accumulate=True)
counts3 = torch.zeros(4).index_add_(0, idx, torch.ones(5))
print(counts2, counts3, torch.bincount(idx, minlength=4))
w = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
picked = w[idx]
picked.sum().backward()
print(picked, w.grad)
