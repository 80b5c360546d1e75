# ruff: noqa
# Chained assignment makes two names for one tensor (a += changes both), tuple swap exchanges names, and a list copy still shares the tensors.
import torch
a = b = torch.zeros(2)
a += 1
print(a, b, a is b)
a = a + 1
print(a, b, a is b)
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = torch.tensor([3.0, 4.0], requires_grad=True)
x, y = y, x
loss = (x * 10 + y).sum()
loss.backward()
print(x.grad, y.grad)
ws = [torch.ones(2), torch.zeros(2)]
copy = list(ws)
copy[0].mul_(5)
copy[1] = torch.full((2,), 7.0)
print(ws, copy)
