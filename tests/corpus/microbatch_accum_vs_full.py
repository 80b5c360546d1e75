# ruff: noqa
# Gradient accumulation over micro-batches equals the full batch gradient (loss divided by steps).
import torch
torch.manual_seed(5)
X = torch.randn(8, 3)
Y = torch.randn(8)
w = torch.zeros(3, requires_grad=True)
full = ((X @ w - Y) ** 2).mean()
full.backward()
g_full = w.grad.clone()
w.grad = None
accum = 4
for xb, yb in zip(X.chunk(accum), Y.chunk(accum)):
    part = ((xb @ w - yb) ** 2).mean() / accum
    part.backward()
print(g_full, w.grad, torch.allclose(g_full, w.grad))
