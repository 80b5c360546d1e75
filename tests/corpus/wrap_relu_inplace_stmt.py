# ruff: noqa
# A learner's wrapper around F.relu and torch.exp runs once per call in statements that change values in place.
import torch
import torch.nn.functional as F
calls = []
orig_relu, orig_exp = F.relu, torch.exp
def relu(t, *a, **k):
    calls.append("relu")
    return orig_relu(t, *a, **k)
def exp(t, *a, **k):
    calls.append("exp")
    return orig_exp(t, *a, **k)
F.relu, torch.exp = relu, exp
try:
    x = torch.tensor([-1., 2.], requires_grad=True)
    y = F.relu(x * 1).add_(1)
    z = torch.exp(x).mul_(2)
    buf = torch.zeros(2)
    torch.exp(x.detach(), out=buf)
    y[0] = F.relu(x[1])
    (y.sum() + z.sum()).backward()
    print(calls, y, z, x.grad)
finally:
    F.relu, torch.exp = orig_relu, orig_exp
