# ruff: noqa
# float64, float16 and type promotion.
import torch
a = torch.tensor([1.25, 2.5], dtype=torch.float64, requires_grad=True)
b = torch.tensor([0.1, 0.2], dtype=torch.float16, requires_grad=True)
c = a * b
d = b.float() + 1e-3
e = d.half() * 3
s = c.sum() + e.double().sum()
s.backward()
tiny = torch.tensor([65504.], dtype=torch.float16) * 2
