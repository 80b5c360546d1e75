# ruff: noqa
# Which in-place change breaks backward? x += 1 after y = x.sigmoid() is fine (sigmoid saves its output), after y = x ** 2 it is not.
import torch
a = torch.tensor([0.5, -1.0], requires_grad=True)
x = a * 2
y = x.sigmoid()
x += 1
y.sum().backward()
print("sigmoid then x += 1:", a.grad)
a.grad = None
x = a * 2
y = x ** 2
x += 1
try:
    y.sum().backward()
except RuntimeError as e:
    print("pow then x += 1 fails:", type(e).__name__)
a.grad = None
x = a * 2
y = x.sigmoid()
y += 1
try:
    y.sum().backward()
except RuntimeError as e:
    print("sigmoid then y += 1 fails too")
print(a.grad)
