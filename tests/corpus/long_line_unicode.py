# ruff: noqa
# Unicode names and a very long line.
import torch
α = torch.tensor([0.5, 1.5], requires_grad=True)
β_grad_ñ = α * 2
résultat = (β_grad_ñ + α * 3 - α ** 2 + torch.sin(α) * torch.cos(α) + torch.exp(-α) * 0.25 - torch.log1p(α) + α.tanh() * α.sigmoid() + (α * 0.1).clamp(min=0.01) + torch.sqrt(α + 1) - α.abs() * 0.5 + (α - 0.1).relu()).sum()
résultat.backward()
print(α.grad)
