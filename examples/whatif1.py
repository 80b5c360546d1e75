"""WhatIF (1) from the forum: re-use the name x for x ** 2.

x now names a new tensor (x ** 2); the leaf 42. is still in the graph but no
name refers to it. f = x + x**3 with x = 1764, so df/dx = 1 + 3 * 1764**2 = 9335089.
"""
import torch

x = torch.tensor(42., requires_grad=True)
x = x ** 2  # re-use the same variable
x3 = x ** 3
f = x + x3
x.retain_grad()
f.backward(retain_graph=False)
print(x.grad)
