# ruff: noqa
# Hooks as learners use them: print the gradient passing through, halve it on the leaf, remove the handle and run again.
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * x
h1 = y.register_hook(lambda g: print("grad at y:", g))
h2 = x.register_hook(lambda g: g * 0.5)
z = (y * 3).sum()
z.backward()
print("x.grad", x.grad)
h1.remove()
h2.remove()
x.grad = None
z2 = (x * x * 3).sum()
z2.backward()
print("x.grad without hooks", x.grad)
seen = []
def keep(g):
    seen.append(g.clone())
a = x.exp()
a.register_hook(keep)
a.sum().backward()
print(len(seen), seen[0], x.grad)
