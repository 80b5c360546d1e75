"""A graph 100,000 operations deep, then freed.

Each h = h * 1.0001 makes a new tensor and a new MulBackward0 node; the name h
moves on, the graph keeps every node. Freeing such a graph (del h) recurses
through it: gradtrace makes room on the stack so this never crashes.
"""
import torch

h = torch.ones(1, requires_grad=True)
for _ in range(100_000):
    h = h * 1.0001
print(h.grad_fn.name())
del h
print("freed")
