# ruff: noqa
# The gradient of a distance at zero: torch.norm/linalg.vector_norm give 0, sqrt of a sum of squares gives NaN, an epsilon fixes it.
import torch
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([1.0, 2.0])
d1 = torch.linalg.vector_norm(a - b)
d1.backward()
print(d1, a.grad)
a.grad = None
d2 = torch.sqrt(((a - b) ** 2).sum())
d2.backward()
print(d2, a.grad)
a.grad = None
d3 = torch.sqrt(((a - b) ** 2).sum() + 1e-8)
d3.backward()
print(d3, a.grad)
a.grad = None
d4 = (a - b).norm(p=2)
d4.backward()
print(a.grad, torch.isnan(a.grad).any())
