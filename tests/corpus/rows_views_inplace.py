# ruff: noqa
# Iterating over a tensor gives views of its rows: normalising each row in place under no_grad changes the weight matrix itself.
import torch
torch.manual_seed(0)
W = torch.randn(3, 2, requires_grad=True)
with torch.no_grad():
    for row in W:
        row.div_(row.norm())
print(W, W._version, W.norm(dim=1))
first, *rest = W.unbind(0)
print(first._base is W, len(rest))
a, b = torch.ones(4).chunk(2)
a.mul_(3)
print(a, b, a._base.sum())
left, right = torch.arange(6.).split([2, 4])
right[0] = -1
print(left, right, right._base)
loss = (W.T @ W).trace()
loss.backward()
print(W.grad)
