# ruff: noqa
# autograd.grad with allow_unused (None for an input not used), materialize_grads, and backward(inputs=[...]) touching only some leaves.
import torch
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, 4.0], requires_grad=True)
c = torch.tensor([5.0, 6.0], requires_grad=True)
out = (a * b).sum()
try:
    torch.autograd.grad(out, [a, c], retain_graph=True)
except RuntimeError as e:
    print(str(e)[:60])
ga, gc = torch.autograd.grad(out, [a, c], allow_unused=True, retain_graph=True)
print(ga, gc)
ga2, gc2 = torch.autograd.grad(out, [a, c], allow_unused=True, materialize_grads=True, retain_graph=True)
print(gc2)
out.backward(inputs=[b])
print(a.grad, b.grad, c.grad)
