# ruff: noqa
# A learner's wrapper around Tensor.backward runs once per call, as without tracing.
import torch
calls = []
orig = torch.Tensor.backward
def doubled(self, *a, **k):
    calls.append(1)
    return orig(self * 2, *a, **k)
torch.Tensor.backward = doubled
try:
    x = torch.tensor([1., 2.], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    print(len(calls), x.grad)
finally:
    torch.Tensor.backward = orig
