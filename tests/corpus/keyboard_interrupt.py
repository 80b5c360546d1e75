# ruff: noqa
# KeyboardInterrupt stops the program (and the caller) as it would without tracing.
import torch
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
raise KeyboardInterrupt
z = y + 1
