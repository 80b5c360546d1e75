"""The blog's third program exactly as printed: ``4 * x[1] * [1]`` multiplies by a list.

It does not run: PyTorch tries to use the tensor as a list index and raises
TypeError: only integer tensors of a single element can be converted to an index.
See blog_fixed.py for the program the blog meant.
"""
import torch

x = torch.tensor([1., 2.], requires_grad=True)
y = 2 * x[0] * x[0] + 4 * x[1] * [1]
y.backward()
print(x.grad)
