# ruff: noqa
# Tensors kept in a set on an object: they hash by identity, so equal values are still two members.
import torch
class Bag:
    pass
bag = Bag()
bag.items = set()
a = torch.tensor(1.0, requires_grad=True)
for k in range(3):
    bag.items.add(a * 2)
print(len(bag.items))
total = sum(bag.items)
total.backward()
print(a.grad)
bag.items.clear()
print(len(bag.items), total.grad_fn.name())
