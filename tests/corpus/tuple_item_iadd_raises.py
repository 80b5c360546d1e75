# ruff: noqa
# The Python gotcha with tensors in a tuple: params[0] += 1 changes the tensor in place, then raises TypeError on the tuple assignment.
import torch
a = torch.tensor([1.0, 2.0])
b = torch.tensor([3.0])
params = (a, b)
try:
    params[0] += 1
except TypeError as e:
    print("TypeError:", e)
print(a, params[0] is a, a._version)
x = torch.tensor([0.5, 1.5], requires_grad=True)
h = x * 3
pair = (h, x)
s = h ** 2
try:
    pair[0] += 1
except TypeError:
    print("changed anyway:", h, h._version)
try:
    s.sum().backward()
    print(x.grad)
except RuntimeError as e:
    print("backward failed")
