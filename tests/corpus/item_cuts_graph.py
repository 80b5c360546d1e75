# ruff: noqa
# Using .item() or float() in the middle of a computation makes a constant: normalising by x.max().item() gives a different gradient than by x.max().
import torch
x = torch.tensor([1.0, 4.0, 2.0], requires_grad=True)
scale = x.max().item()
y1 = (x / scale).sum()
y1.backward()
print(type(scale).__name__, x.grad)
x.grad = None
y2 = (x / x.max()).sum()
y2.backward()
print(x.grad)
x.grad = None
total = 0.0
for v in x:
    total += float(v) ** 2
print(total, type(total))
t = sum(v ** 2 for v in x)
t.backward()
print(t, x.grad)
