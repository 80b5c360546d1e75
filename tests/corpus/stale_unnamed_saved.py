# ruff: noqa
# A saved tensor no name reaches (an object's attribute) changed in place: backward fails, and it is predicted.
import torch
class Box:
    pass
box = Box()
x = torch.tensor([1., 2.], requires_grad=True)
box.h = x * 1
y = box.h * box.h
box.h.add_(1)
s = y.sum()
s.backward()
