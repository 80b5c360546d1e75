# ruff: noqa
# NumPy round trips: torch.tensor(arr) copies, torch.from_numpy(arr) shares, x.detach().numpy() shares with x.
import numpy as np
import torch
arr = np.array([1.0, 2.0, 3.0], dtype=np.float32)
copied = torch.tensor(arr)
shared = torch.from_numpy(arr)
arr[0] = 100.0
print(copied, shared)
x = torch.tensor([0.5, 1.5], requires_grad=True)
view = x.detach().numpy()
y = (x ** 2).sum()
view *= 2
print(x, x._version)
try:
    y.backward()
    print("backward used the changed x:", x.grad)
except RuntimeError as e:
    print(e)
back = torch.from_numpy(view.copy()).requires_grad_()
z = (back * 3).sum()
z.backward()
print(back.grad, back.dtype)
m = np.ones((2, 2))
t = torch.as_tensor(m)
t.add_(1)
print(m, t.dtype)
