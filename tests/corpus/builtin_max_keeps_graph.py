# ruff: noqa
# Tracking the best loss with Python's max/min: the "best" name holds the loss tensor and its whole graph.
import torch
w = torch.tensor(3.0, requires_grad=True)
best = None
for step in range(3):
    loss = (w - step) ** 2
    best = loss if best is None else min(best, loss)
    print(step, loss.item(), best is loss)
print(best.grad_fn.name(), best.item())
best.backward()
print(w.grad)
