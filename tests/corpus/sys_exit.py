# ruff: noqa
# sys.exit ends the program as it would without tracing.
import sys
import torch
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
print("leaving")
sys.exit(3)
z = y + 1
