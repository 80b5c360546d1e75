# ruff: noqa
# A learner's TorchDispatchMode sees exactly the aten ops of in-place statements.
import torch
from torch.utils._python_dispatch import TorchDispatchMode
ops = []
class Count(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        ops.append(str(func))
        return func(*args, **(kwargs or {}))
x = torch.tensor([1., 2., 3.], requires_grad=True)
with Count():
    y = x * 2
    y.add_(1)
    y[0] = 0.
    y.sum().backward()
print(len(ops), ops)
print(x.grad)
