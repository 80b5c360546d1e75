# ruff: noqa
# A tensor that shares memory with a NumPy array changes when the array does.
import numpy as np
import torch
a = np.array([1., 2., 3.])
b = torch.from_numpy(a)
np.add(a, 1, out=a)
c = b * 2
a[0] = 10.
d = b + 0
