# ruff: noqa
# Integer, bool and complex tensors with in-place ops, and a complex gradient.
import torch
i = torch.tensor([1, 2, 3])
i += 4
i //= 2
b = i > 2
b &= torch.tensor([True, False, True])
c = torch.tensor([1 + 2j, 3 - 1j], requires_grad=True)
m = (c * c.conj()).real.sum()
m.backward()
k = torch.tensor([1, 2], dtype=torch.int8)
k.mul_(100)
print(i, b, c.grad, k)
