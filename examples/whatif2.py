"""WhatIF (2) from the forum: y = x ** 2, then the name x is re-used for y ** 3.

f = y + x, and x is the last tensor before f: df/dx = 1.
"""
import torch

x = torch.tensor(42., requires_grad=True)
y = x ** 2
x = y ** 3  # re-use the same variable
f = y + x
x.retain_grad()
f.backward(retain_graph=False)
print(x.grad)
