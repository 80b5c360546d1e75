# ruff: noqa
# x = x + 1 on a leaf makes a new non-leaf tensor; x += 1 tries to change the leaf and fails; .grad of the non-leaf is None.
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
leaf = x
try:
    x += 1
except RuntimeError as e:
    print("x += 1:", e)
print(x is leaf, x.is_leaf)
x = x + 1
print(x is leaf, x.is_leaf, x.grad_fn.name())
y = (x * x).sum()
y.backward()
print(x.grad, leaf.grad)
try:
    leaf.data += 1
    print("leaf.data += 1 worked:", leaf, leaf._version)
except RuntimeError as e:
    print(e)
z = (x * leaf).sum()
z.backward()
print(leaf.grad)
