# ruff: noqa
# A TorchDispatchMode that counts ops in a tensor (written below autograd: its version never moves),
# also while backward() runs the graph under it: the count shown after each statement is the live one.
import torch
from torch.utils._python_dispatch import TorchDispatchMode
count = torch.zeros((), dtype=torch.int64)
class Count(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        count.add_(1)
        return func(*args, **(kwargs or {}))
x = torch.tensor([1., 2.], requires_grad=True)
with Count():
    y = (x * x).sum()
    y.backward()
    g = x.grad * 1
print(count, x.grad, g)
