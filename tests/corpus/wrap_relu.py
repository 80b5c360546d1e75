# ruff: noqa
# A learner's wrapper around F.relu runs once per call.
import torch
import torch.nn.functional as F
calls = []
orig = F.relu
def counted(t, *a, **k):
    calls.append(1)
    return orig(t * 2, *a, **k)
F.relu = counted
try:
    x = torch.tensor([-1., 2.], requires_grad=True)
    y = F.relu(x)
    y.sum().backward()
    print(len(calls), y, x.grad)
finally:
    F.relu = orig
