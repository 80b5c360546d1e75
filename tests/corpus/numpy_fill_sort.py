# ruff: noqa
# NumPy methods that write in place with no operator in sight: fill, sort, put, np.copyto on an array sharing a tensor's memory.
import numpy as np
import torch
t = torch.tensor([3.0, 1.0, 2.0])
a = t.numpy()
a.sort()
print(t)
a.fill(7.0)
print(t)
np.copyto(a, np.array([1.0, 2.0, 3.0], dtype=np.float32))
np.put(a, [0], [9.0])
b = torch.ones(2, 2)
m = b.numpy()
m.itemset((0, 0), 4.0) if hasattr(m, "itemset") else np.fill_diagonal(m, 4.0)
print(t, b)
