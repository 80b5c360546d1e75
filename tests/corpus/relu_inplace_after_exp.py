# ruff: noqa
# relu_() straight after exp(): exp saved its output, relu_ rewrites it (same values here, new version), and backward refuses.
import torch
x = torch.tensor([-1.0, 0.0, 1.0], requires_grad=True)
e = x.exp()
e.relu_()
print(e, e._version, e.grad_fn.name())
try:
    e.sum().backward()
except RuntimeError as err:
    print(str(err).split(":")[0])
e = x.exp()
r = e.relu()
r.sum().backward()
print(x.grad)
x.grad.zero_()
h = torch.tanh(x)
h.clamp_(min=0)
try:
    h.sum().backward()
except RuntimeError:
    print("tanh then clamp_ also fails")
print(x.grad)
