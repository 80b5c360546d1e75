"""Mutating a tensor that the graph saved makes the next backward() fail.

z = y ** 2 saves y (it needs y to compute 2 * y). y.add_(1) then changes that
same object in place: its version goes from 0 to 1, and the saved value is
stale. backward() checks the version and raises
RuntimeError: one of the variables needed for gradient computation has been
modified by an inplace operation. gradtrace says so before backward() runs.
"""
import torch

x = torch.tensor([1., 2., 3.], requires_grad=True)
y = x * 2
z = y ** 2
print(y._version)
y.add_(1)  # same object, new version: the y that z saved is stale
print(y._version)
z.sum().backward()
print(x.grad)
