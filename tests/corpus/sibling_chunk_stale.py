# ruff: noqa
# "I only changed a, why does b's backward fail?": two slices of one tensor share a version counter.
import torch
x = torch.tensor([0.5, 1.0, 1.5, 2.0], requires_grad=True)
h = x * 1.0
a, b = h.chunk(2)
try:
    a.mul_(2)
except RuntimeError as e:
    print("chunk views refuse:", "multiple views" in str(e))
a, b = h[:2], h[2:]
y = b.sin()
print(a._version, b._version)
a.mul_(2)
print(a._version, b._version, b)
try:
    y.sum().backward()
except RuntimeError as e:
    print("failed:", "modified by an inplace operation" in str(e))
h = x * 1.0
a, b = h[:2], h[2:]
y = b.sin()
a = a * 2
y.sum().backward()
print(x.grad)
