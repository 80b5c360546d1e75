# ruff: noqa
# Printing, and a warning, as without tracing.
import torch
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
print(y.grad)
print("y =", y)
import sys
print("to stderr", file=sys.stderr)
