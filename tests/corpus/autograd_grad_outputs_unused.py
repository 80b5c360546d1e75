# ruff: noqa
# autograd.grad with grad_outputs on a vector output, allow_unused and materialize_grads.
import torch
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = torch.tensor([4.0, 5.0], requires_grad=True)
c = torch.tensor(2.0, requires_grad=True)
y = a * a * c
v = torch.tensor([1.0, 0.5, -1.0])
ga, gc, gb = torch.autograd.grad(y, (a, c, b), grad_outputs=v, allow_unused=True, retain_graph=True)
print(ga, gc, gb)
ga2, gb2 = torch.autograd.grad(y, (a, b), grad_outputs=v, allow_unused=True, materialize_grads=True)
print(ga2, gb2)
try:
    torch.autograd.grad(y, b)
except RuntimeError as e:
    print("error:", str(e)[:60])
print(a.grad, b.grad, c.grad)
