# ruff: noqa
# A learner's TorchDispatchMode sees exactly the ops its code makes.
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
    z = y.sum()
    z.backward()
print(len(ops), ops)
