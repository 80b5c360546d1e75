# ruff: noqa
# A TorchDispatchMode whose handler has several statements, around in-place ops on tensors in the graph.
import torch
from torch.utils._python_dispatch import TorchDispatchMode
class Trace(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.names = []
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.__name__
        self.names.append(name)
        out = func(*args, **(kwargs or {}))
        return out
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
with Trace() as t:
    y.mul_(3)
    y.add_(1)
z = y.sum()
z.backward()
print(t.names, y, x.grad)
