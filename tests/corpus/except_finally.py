# ruff: noqa
# Bodies of except handlers and finally blocks are steps of their own.
import torch
x = torch.tensor([1., 2.], requires_grad=True)
try:
    y = x.view(3)
except RuntimeError as e:
    y = x * 2
    z = y + 1
else:
    z = None
finally:
    w = x * 3
