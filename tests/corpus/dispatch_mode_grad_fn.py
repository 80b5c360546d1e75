# ruff: noqa
# Values made and changed inside a learner's TorchDispatchMode show their values at each step.
import torch
from torch.utils._python_dispatch import TorchDispatchMode
class Quiet(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))
w = torch.tensor([1., 2.], requires_grad=True)
with Quiet():
    a = w * 3
    a.mul_(2)
    b = a.exp()
loss = b.sum()
loss.backward()
print(a, w.grad)
