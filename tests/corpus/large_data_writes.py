# ruff: noqa
# .data writes, numpy-shared writes and set_ on tensors with more than 16 elements.
import numpy as np
import torch
w = torch.randn(5, 5, generator=torch.Generator().manual_seed(1), requires_grad=True)
loss = (w ** 2).sum()
loss.backward()
w.data = w.data - 0.1 * w.grad.data
w.data.mul_(2)
a = np.arange(30.)
t = torch.from_numpy(a)
np.multiply(a, 3, out=a)
u = t + 0
a[:10] = -1.
print(w.sum(), t.sum(), u.sum())
