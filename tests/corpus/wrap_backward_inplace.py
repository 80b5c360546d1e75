# ruff: noqa
# A learner's wrapper around Tensor.backward, called from a statement that also changes a tensor in place.
import torch
orig = torch.Tensor.backward
n = [0]
def backward(self, *a, **k):
    n[0] += 1
    return orig(self, *a, **k)
torch.Tensor.backward = backward
try:
    x = torch.tensor([1., 2.], requires_grad=True)
    acc = torch.zeros(2)
    y = (x * x).sum()
    y.backward(); acc += x.grad
    print(n[0], acc)
finally:
    torch.Tensor.backward = orig
