"""The blog's third program as meant: y = 2 * x0**2 + 4 * x1**2 is a scalar.

dy/dx = [4 * x0, 8 * x1] = [4., 16.].
"""
import torch

x = torch.tensor([1., 2.], requires_grad=True)
y = 2 * x[0] * x[0] + 4 * x[1] * x[1]
y.backward()
print(x.grad)
