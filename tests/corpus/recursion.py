# ruff: noqa
# Recursion: each call is its own frame.
import torch
def fib(n, a):
    if n <= 1:
        return a
    b = a * 2
    return fib(n - 1, b) + fib(n - 2, a)
x = torch.tensor(1., requires_grad=True)
y = fib(4, x)
y.backward()
