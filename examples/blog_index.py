"""The blog's second program: backward() from one element of a vector.

y[0] = x[0]**2 + 2 is a scalar: d y[0] / dx = [2 * x[0], 0] = [2., 0.].
"""
import torch

x = torch.tensor([1., 2.], requires_grad=True)
y = x * x + 2
y[0].backward()
print(x.grad)
