# ruff: noqa
# Tensors as dict keys: they hash by identity, so an equal tensor is a different key.
import torch
a = torch.tensor(1.0, requires_grad=True)
b = torch.tensor(1.0, requires_grad=True)
lr = {a: 0.1, b: 0.01}
print(len(lr), a in lr)
loss = a * 3 + b * 5
loss.backward()
with torch.no_grad():
    for p, step in lr.items():
        p -= step * p.grad
print(a, b)
c = a.detach()
print(c in lr)
