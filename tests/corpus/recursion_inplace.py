# ruff: noqa
# A recursive function that changes a shared tensor in place at each depth and builds a graph.
import torch
def walk(t, acc, n):
    if n == 0:
        return t
    acc.add_(n)
    u = walk(t * 2, acc, n - 1)
    return u + acc.sum()
acc = torch.zeros(2)
x = torch.tensor([1., 2.], requires_grad=True)
out = walk(x, acc, 3)
out.sum().backward()
print(out, acc, x.grad)
