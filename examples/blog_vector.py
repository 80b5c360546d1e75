"""The blog's first program: a vector output needs a gradient argument.

y = x*x + 4 is a vector, so y.backward(x) computes the vector-Jacobian product
x * dy/dx = x * 2x = [2., 8., 18.] (float64: the tensor came from NumPy).
"""
import numpy as np
import torch

x = np.array([1., 2., 3.])
x = torch.from_numpy(x)
x.requires_grad_(True)
y = x * x + 4
y.backward(x)
print(x.grad)
