# ruff: noqa
# A TorchDispatchMode whose handler writes tensors itself, below autograd (no version counter moves):
# a counter it keeps in a tensor, and the output of every in-place add, scaled after the kernel ran.
import torch
from torch.utils._python_dispatch import TorchDispatchMode
count = torch.zeros(())
class Scale(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        count.add_(1)
        out = func(*args, **(kwargs or {}))
        if func is torch.ops.aten.add_.Tensor:
            out.mul_(10)
        return out
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
w = y * y
with Scale():
    y.add_(1)
    v = x + 1
print(count, y, v)
w.sum().backward()
