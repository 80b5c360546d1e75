# ruff: noqa
# x.detach().numpy() shares memory with x: writing the array changes the tensor.
import torch
x = torch.tensor([1., 2., 3.], requires_grad=True)
arr = x.detach().numpy()
arr[0] = 10.0
y = x * 2
arr *= 2
copy = x.detach().clone().numpy()
copy[1] = -5.0
y.sum().backward()
print(x, y, x.grad, copy)
