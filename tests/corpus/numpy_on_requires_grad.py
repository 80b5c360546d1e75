# ruff: noqa
# .numpy() on a tensor that requires grad raises; detach().numpy() shares memory; force=True copies.
import numpy as np
import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
try:
    w.numpy()
except RuntimeError as e:
    print("error:", str(e)[:60])
arr = w.detach().numpy()
arr[0] = 10.0
copy = w.numpy(force=True)
copy[1] = -5.0
y = (w * w).sum()
y.backward()
print(w, arr, copy, w.grad)
