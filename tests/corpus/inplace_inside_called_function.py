# ruff: noqa
# In-place changes made inside functions called from statements that change values in place themselves.
import torch
def bump(t, k):
    t.add_(k)
    n = t.numel()
    return t
def scale(t):
    u = t * 2
    u.mul_(3)
    return u
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 1
z = bump(y, 1).mul_(2)
w = scale(x).add_(bump(y, 5))
y[0] = scale(x)[1]
loss = (z + w).sum()
loss.backward()
print(z, w, y, x.grad)
