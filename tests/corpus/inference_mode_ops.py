# ruff: noqa
# inference_mode tensors and in-place ops on them.
import torch
w = torch.tensor([1., 2.], requires_grad=True)
with torch.inference_mode():
    a = w * 2
    a.add_(1)
    b = torch.ones(2)
    b.mul_(3)
c = w.clone()
with torch.inference_mode(False):
    d = c * 2
print(a, b, a.is_inference(), d.requires_grad)
try:
    (a * w).sum().backward()
except RuntimeError as e:
    err = type(e).__name__
print(w.grad)
