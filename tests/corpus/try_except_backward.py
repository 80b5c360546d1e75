# ruff: noqa
# A failing backward caught and recovered from: the values after the handler are right.
import torch
x = torch.tensor([1., 2.], requires_grad=True)
y = x.sigmoid()
y.mul_(2)
try:
    y.sum().backward()
except RuntimeError as e:
    reason = "inplace" in str(e)
    y = x.sigmoid() * 2
    y.sum().backward()
else:
    reason = None
finally:
    done = True
print(reason, x.grad)
