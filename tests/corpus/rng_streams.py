# ruff: noqa
# Random streams advance exactly as without tracing.
import random
import numpy as np
import torch
a = torch.rand(3)
b = torch.randn(2, requires_grad=True)
r = random.random()
n = np.random.rand(2)
c = torch.nn.functional.dropout(b, 0.5)
print(a, r, n, c)
