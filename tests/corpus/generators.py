# ruff: noqa
# A generator yields tensors.
import torch
def powers(t):
    p = t
    for i in range(3):
        yield p
        p = p * t
x = torch.tensor(2., requires_grad=True)
total = sum(powers(x))
total.backward()
