# ruff: noqa
# autograd.grad that reaches only a fresh branch succeeds although another branch is stale.
import torch
a = torch.tensor([1., 2.], requires_grad=True)
b = torch.tensor([3., 4.], requires_grad=True)
ha = a * 1
hb = b * 1
out = (ha.exp() + hb * 2).sum()
ha.add_(1)
gb, = torch.autograd.grad(out, [b], retain_graph=True)
ga, gu = torch.autograd.grad(out, [b, torch.ones(1, requires_grad=True)], allow_unused=True, retain_graph=True)
try:
    torch.autograd.grad(out, [a])
except RuntimeError:
    pass
print(gb, ga, gu)
