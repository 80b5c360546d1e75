# ruff: noqa
# saved_tensors_hooks that pack a copy: a later in-place change is not seen, so backward succeeds.
import torch
packed = []
def pack(t):
    packed.append(tuple(t.shape))
    return t.clone()
def unpack(t):
    return t
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    a = x * 1
    b = a * a
a.add_(1)
b.sum().backward()
print(len(packed), b, x.grad)
