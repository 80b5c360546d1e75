# ruff: noqa
# Iterating a tensor with `for v in x`, then using the last v after the loop.
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
total = 0
for v in x:
    total = total + v * v
print(total, v)
last = v * 10
last.backward()
print(x.grad)
