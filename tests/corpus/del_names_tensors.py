# ruff: noqa
# del on names, list items and attributes holding tensors.
import torch
class Box:
    pass
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
keep = [y, y + 1, y * 3]
box = Box()
box.t = keep[1]
del y
del keep[0]
z = keep[0].sum() + box.t.sum()
del box.t
z.backward()
del z, keep
print(x.grad)
