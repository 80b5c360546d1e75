# ruff: noqa
# Trying to switch requires_grad off on a non-leaf raises; detach() is the way.
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
h = x * 3
try:
    h.requires_grad = False
except RuntimeError as e:
    print("error:", str(e)[:50])
h2 = h.detach()
print(h2.requires_grad, h2.grad_fn)
h2.requires_grad_(True)
z = (h2 * h).sum()
z.backward()
print(x.grad, h2.grad)
