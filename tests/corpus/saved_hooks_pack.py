# ruff: noqa
# saved_tensors_hooks: the hooks run as often as without tracing; no false prediction.
import torch
packed = []
def pack(t):
    packed.append(1)
    return t.clone()
def unpack(t):
    packed.append(2)
    return t
x = torch.tensor([1., 2.], requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    a = x * 1
    y = a * a
a.add_(1)
y.sum().backward()
print(packed, x.grad)
