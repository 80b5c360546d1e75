# ruff: noqa
# Gradient accumulation with unequal micro-batches, checked against one full batch.
import torch
torch.manual_seed(6)
w = torch.randn(3, requires_grad=True)
X = torch.randn(5, 3)
for chunk in X.split([2, 3]):
    part = (chunk @ w).pow(2).sum() / len(X)
    part.backward()
acc = w.grad.clone()
w.grad = None
((X @ w).pow(2).sum() / len(X)).backward()
print(acc, w.grad, torch.allclose(acc, w.grad))
