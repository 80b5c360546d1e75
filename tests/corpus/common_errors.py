# ruff: noqa
# The errors beginners hit first, each caught and printed: int requires_grad, non-scalar backward, backward under no_grad, .numpy() of a tensor that requires grad, zero_() of a missing grad.
import torch
try:
    t = torch.tensor([1, 2, 3], requires_grad=True)
except RuntimeError as e:
    print("1:", e)
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 2
try:
    y.backward()
except RuntimeError as e:
    print("2:", e)
with torch.no_grad():
    z = (x ** 2).sum()
try:
    z.backward()
except RuntimeError as e:
    print("3:", e)
try:
    arr = x.numpy()
except RuntimeError as e:
    print("4:", e)
try:
    x.grad.zero_()
except AttributeError as e:
    print("5:", e)
y.sum().backward()
x.grad.zero_()
print(x.grad)
w = torch.ones(2, 2, requires_grad=True)
try:
    w[0, 0] = 5.0
except RuntimeError as e:
    print("6:", e)
v = w * 1
v[0, 0] = 5.0
v.sum().backward()
print(w.grad)
