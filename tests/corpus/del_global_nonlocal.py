# ruff: noqa
# Deleting names, global and nonlocal rebinding of tensors.
import torch
w = torch.tensor([1., 2.], requires_grad=True)
state = torch.zeros(2)
def bump():
    global state
    state = state + w
def counter():
    total = torch.zeros(2)
    def add(t):
        nonlocal total
        total = total + t
        return total
    add(w)
    return add(w * 2)
bump(); bump()
c = counter()
tmp = c * 2
del tmp
c.sum().backward()
del c
print(state, w.grad)
