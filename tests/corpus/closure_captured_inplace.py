# ruff: noqa
# A closure changes a captured tensor in place; a lambda reads it later.
import torch
def make():
    state = torch.zeros(2)
    def step(t):
        state.add_(t)
        return state.clone()
    return step, lambda: state * 1
step, read = make()
x = torch.tensor([1., 2.])
a = step(x)
b = step(x * 2)
c = read()
print(a, b, c)
