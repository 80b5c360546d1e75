# ruff: noqa
# A loop written on one line is a step per pass, each with its own value.
import torch
h = torch.tensor([1., 2.], requires_grad=True)
for i in range(3): h = h * 2
a = h + 1; b = a * 2; c = b - a
while c.sum() < 40: c = c * 2
