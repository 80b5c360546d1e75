# ruff: noqa
# Complex, integer and low-precision dtypes.
import torch
a = torch.tensor([1 + 2j, 3 - 1j], requires_grad=True)
b = (a * a.conj()).real.sum()
b.backward()
i = torch.arange(5)
i.add_(3)
h = torch.tensor([1.5, 2.25], dtype=torch.float16, requires_grad=True)
k = (h * h).sum()
k.backward()
bf = torch.tensor([0.1, 0.2], dtype=torch.bfloat16)
bf.mul_(3)
