# ruff: noqa
# functools.reduce, map with lambda, itertools.accumulate and builtin sum over tensors.
import functools
import itertools
import operator
import torch
xs = [torch.tensor(float(i), requires_grad=True) for i in range(1, 4)]
prod = functools.reduce(operator.mul, xs)
squares = list(map(lambda t: t * t, xs))
running = list(itertools.accumulate(squares))
total = sum(squares)
(prod + total + running[-1]).backward()
print(prod, running, [t.grad for t in xs])
