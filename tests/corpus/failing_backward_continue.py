# ruff: noqa
# A backward that fails on a stale value, caught, then the graph rebuilt and trained on.
import torch
w = torch.tensor([0.5, -0.5], requires_grad=True)
h = w * 3
out = h.sin()
h.add_(1)
loss = out.sum()
try:
    loss.backward()
except RuntimeError as e:
    print("failed:", str(e)[:50])
    h = w * 3
    out = h.sin()
    loss = out.sum()
loss.backward()
print(w.grad)
