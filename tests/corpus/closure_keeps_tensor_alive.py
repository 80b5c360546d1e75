# ruff: noqa
# A closure captures an intermediate tensor; deleting the name does not free it.
import torch
def make_scaler():
    w = torch.tensor(3.0, requires_grad=True)
    h = w * 2
    def scale(z):
        return z * h
    return scale, w
scale, w = make_scaler()
out = scale(torch.tensor(5.0))
out.backward()
print(out, w.grad)
print(scale.__closure__[0].cell_contents)
del scale
print(out.grad_fn.name())
