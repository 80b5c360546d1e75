# ruff: noqa
# Mistakes a learner makes, caught and handled, and the program goes on.
import torch
x = torch.tensor([1., 2., 3.], requires_grad=True)
errors = []
try:
    bad = x @ torch.ones(2)
except RuntimeError as e:
    errors.append("shape")
try:
    x.add_(1)
except RuntimeError as e:
    errors.append("leaf")
try:
    (x * 2).backward()
except RuntimeError as e:
    errors.append("scalar")
else:
    errors.append("no error?")
try:
    x.numpy()
except RuntimeError:
    errors.append("numpy")
finally:
    y = (x * 2).sum()
y.backward()
print(errors, x.grad)
