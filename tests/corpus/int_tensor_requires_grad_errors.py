# ruff: noqa
# Integer tensors cannot require grad; argmax and comparisons give no gradient; .long() and .item() cut the graph.
import torch
try:
    bad = torch.tensor([1, 2, 3], requires_grad=True)
except RuntimeError as e:
    print("error:", e)
x = torch.tensor([1, 2, 3]).float().requires_grad_()
idx = x.argmax()
print(idx, idx.dtype, idx.requires_grad)
rounded = (x * 1.7).long()
print(rounded, rounded.requires_grad, rounded.grad_fn)
mask = x > 1.5
print(mask, mask.sum(), mask.float().mean())
y = (x * mask).sum()
y.backward()
print(x.grad)
k = torch.arange(3)
k += 2
k *= 3
print(k, k // 4, k % 4, k.dtype)
counts = torch.bincount(torch.tensor([0, 1, 1, 3]))
print(counts)
