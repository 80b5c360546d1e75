"""The course forum's first program: f = x**2 + x**3 at x = 42.

df/dx = 2x + 3x**2 = 84 + 5292 = 5376 (the forum post says 53376: a typo).
"""
import torch

x = torch.tensor(42., requires_grad=True)
x2 = x ** 2
x3 = x ** 3
f = x2 + x3
f.backward(retain_graph=False)
print(x.grad)
