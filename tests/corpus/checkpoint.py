# ruff: noqa
# A checkpointed region reruns exactly as often as without tracing.
import torch
from torch.utils.checkpoint import checkpoint
runs = []
def block(t):
    runs.append(1)
    return (t * t).sin()
x = torch.tensor([0.5, 1.5], requires_grad=True)
y = checkpoint(block, x, use_reentrant=False)
z = y.sum()
print(len(runs))
z.backward()
print(len(runs), x.grad)
