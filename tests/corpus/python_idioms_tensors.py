# ruff: noqa
# Python idioms around tensors: chained assignment, a swap, a conditional expression, lambdas, map over params, in-place through a list item, multi-line calls, two context managers on one with.
import torch
a = b = torch.zeros(2)
a += 1
print(a is b, b)
x = torch.tensor([1.0, -2.0], requires_grad=True)
y = torch.tensor([3.0, 4.0], requires_grad=True)
x, y = y, x
square = lambda t: t ** 2
flag = True
z = square(x) if flag else -x
loss = (
    z.sum()
    + (y * 2).sum()
)
loss.backward(
    retain_graph=True,
)
params = [x, y]
print(list(map(lambda p: p.grad.clone(), params)))
with torch.no_grad(), torch.autograd.set_grad_enabled(False):
    params[0] -= 0.1 * params[0].grad
    params[1].sub_(
        0.1 * params[1].grad
    )
list(map(lambda p: p.grad.zero_(), params))
print(x, y, x.grad, torch.is_grad_enabled())
