# ruff: noqa
# A shape error deep inside nested helper functions; the learner catches it and prints the chain.
import torch
import traceback
def inner(a, b):
    return a @ b
def middle(a):
    b = torch.ones(4, 2)
    return inner(a, b)
def outer():
    a = torch.ones(2, 3, requires_grad=True)
    return middle(a)
try:
    outer()
except RuntimeError as e:
    names = [f.name for f in traceback.extract_tb(e.__traceback__)]
    print(names, "mat1 and mat2" in str(e))
a = torch.ones(2, 4, requires_grad=True)
out = middle(a)
out.sum().backward()
print(a.grad)
