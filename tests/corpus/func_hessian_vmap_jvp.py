# ruff: noqa
# torch.func.hessian, jvp and vjp on a small function; the live w is never touched.
import torch
from torch.func import hessian, jvp, vjp
def f(w):
    return (w[0] ** 2 * w[1] + w[1].exp()).sum()
w = torch.tensor([1.5, 0.5], requires_grad=True)
H = hessian(f)(w)
out, tangent = jvp(f, (w,), (torch.tensor([1., 0.]),))
out2, pull = vjp(lambda t: t * t, w)
cot, = pull(torch.ones(2))
loss = f(w)
loss.backward()
print(H, out, tangent, cot, w.grad)
