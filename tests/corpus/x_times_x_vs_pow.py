# ruff: noqa
# x*x uses x twice in one op; x**2 once. Same gradient, different graphs.
import torch
x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
a = x * x
b = x ** 2
c = x.mul(x)
print(a.grad_fn.name(), b.grad_fn.name(), c.grad_fn.name())
print(a.grad_fn.next_functions[0][0] is a.grad_fn.next_functions[1][0])
a.sum().backward()
ga = x.grad.clone()
x.grad = None
b.sum().backward()
print(torch.equal(ga, x.grad), ga)
