# ruff: noqa
# Closures that capture tensors and a factory of functions, differentiated.
import torch
def make_scale(s):
    def scale(t):
        return t * s
    return scale
w = torch.tensor([2., 3.], requires_grad=True)
fs = [make_scale(w), make_scale(w * 2), make_scale(torch.tensor(0.5))]
x = torch.tensor([1., 1.])
out = x
for f in fs:
    out = f(out)
out.sum().backward()
print(out, w.grad)
