# ruff: noqa
# Decorators: a closure-making wrapper (its function starts on the def line), torch.enable_grad() as a decorator.
import functools
import torch
calls = []
def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        calls.append(fn.__name__)
        out = fn(*args, **kwargs)
        return out
    return wrapper
@logged
def square(t):
    r = t * t
    return r
@torch.enable_grad()
def cube(t):
    return t ** 3
x = torch.tensor([1., 2.], requires_grad=True)
with torch.no_grad():
    c = cube(x)
s = square(x)
(s.sum() + c.sum()).backward()
print(calls, x.grad)
