# ruff: noqa
# try/finally around backward: finally runs after an error and after a return.
import torch
def train(x, fail):
    try:
        y = (x * x).sum()
        if fail:
            y = x * x
        y.backward()
        return "ok"
    finally:
        x.grad = None if fail else x.grad
x = torch.tensor([1., 2.], requires_grad=True)
r1 = train(x, False)
g1 = x.grad.clone()
try:
    r2 = train(x, True)
except RuntimeError as e:
    r2 = "failed"
print(r1, r2, g1, x.grad)
