# ruff: noqa
# An in-place product on a view made under the program's saved_tensors_hooks: its pack hook runs
# as often as without tracing, the values it packed are the program's to unpack, and backward
# runs.
import torch
torch.manual_seed(0)
packed = []


def pack(t):
    packed.append(tuple(t.shape))
    return t.clone()


def unpack(t):
    return t


w = torch.randn(2, 3, requires_grad=True)
c = torch.randn(6)
b = w * 2
a = b.reshape(-1)
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    a.mul_(c)
c.add_(1)
print(packed)
a.backward(gradient=torch.ones_like(a))
print(w.grad)
