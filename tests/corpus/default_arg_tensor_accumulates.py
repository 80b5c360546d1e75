# ruff: noqa
# A tensor as a default argument is made once: acc += x inside the function keeps adding across calls.
import torch

def running_sum(x, acc=torch.zeros(2)):
    acc += x
    return acc

r1 = running_sum(torch.tensor([1.0, 1.0]))
r2 = running_sum(torch.tensor([2.0, 0.5]))
print(r1, r2, r1 is r2)

def fixed(x, acc=None):
    if acc is None:
        acc = torch.zeros(2)
    return acc + x

print(fixed(torch.ones(2)), fixed(torch.ones(2)))
print(running_sum.__defaults__[0])
