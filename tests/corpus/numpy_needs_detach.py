# ruff: noqa
# Calling .numpy() on a tensor that requires grad fails; detach().numpy() shares memory, so a NumPy write shows in the tensor.
import numpy as np
import torch
w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = w * 2
try:
    y.numpy()
except RuntimeError as e:
    print("RuntimeError:", e)
arr = y.detach().numpy()
arr[0] = -5.0
print(y, arr.dtype)
y.sum().backward()
print(w.grad)
copy = y.detach().cpu().numpy().copy()
copy[1] = 99
print(y, np.round(copy, 2), y.tolist())
