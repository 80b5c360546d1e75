# ruff: noqa
# Sorting candidate parameter tensors by their loss with sorted(key=...), then training only the best.
import torch
cands = [torch.tensor([v], requires_grad=True) for v in (3.0, -1.0, 0.5)]
def loss_of(p):
    return ((p - 0.4) ** 2).sum()
ranked = sorted(cands, key=lambda p: loss_of(p).item())
best = ranked[0]
print([c.item() for c in ranked], best is cands[2])
loss = loss_of(best)
loss.backward()
print(best.grad, cands[0].grad)
