# ruff: noqa
# Tensors kept in a set on an object: they hash by identity, so equal values are still two members.
# (A set's order follows memory addresses, so the sum takes them in the order of their values: the graph is then the same in every run.)
import torch
class Bag:
    pass
bag = Bag()
bag.items = set()
a = torch.tensor(1.0, requires_grad=True)
for k in range(3):
    bag.items.add(a * 2)
print(len(bag.items))
bag.items.clear()
for k in range(3):
    bag.items.add(a * (k + 2))
total = sum(sorted(bag.items, key=lambda t: t.detach().item()))
total.backward()
print(a.grad)
bag.items.clear()
print(len(bag.items), total.grad_fn.name())
