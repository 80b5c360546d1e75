# ruff: noqa
# Lambdas and comprehensions are part of their statement.
import torch
sq = lambda t: t * t
x = torch.tensor([1., 2.], requires_grad=True)
ys = [sq(x) + i for i in range(3)]
z = sum(y.sum() for y in ys)
z.backward()
