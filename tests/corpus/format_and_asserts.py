# ruff: noqa
# Formatting 0-d tensors in f-strings, tolist(), printing to stderr, and an assert that fails on a gradient check.
import sys
import torch
x = torch.tensor(2.0, requires_grad=True)
y = x ** 3
y.backward()
print(f"y = {y:.3f}, dy/dx = {x.grad:.1f}, {x.grad!r}")
print(y.tolist(), x.grad.tolist(), x.grad.item() == 12.0)
print("warning: tiny gradient", x.grad.item(), file=sys.stderr)
assert torch.isclose(x.grad, torch.tensor(12.0))
try:
    assert x.grad == 13.0, f"expected 13, got {x.grad.item()}"
except AssertionError as e:
    print("assert failed:", e)
z = torch.tensor([1.5, 2.5])
print("{:.2f} and {}".format(z[0], z.tolist()))
