# ruff: noqa
# Mixup: blending two inputs with torch.lerp; the gradient splits by the mixing weight.
import torch
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([10.0, 20.0], requires_grad=True)
lam = torch.tensor(0.3, requires_grad=True)
mixed = torch.lerp(a, b, lam)
mixed.sum().backward()
print(mixed, a.grad, b.grad, lam.grad)
by_hand = (1 - lam) * a + lam * b
print(torch.allclose(by_hand, mixed))
