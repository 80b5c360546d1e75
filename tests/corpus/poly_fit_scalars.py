# ruff: noqa
# The tutorial's cubic fit with four scalar tensors a, b, c, d: loss.backward(), update under no_grad, grads set to None.
import math
import torch
x = torch.linspace(-math.pi, math.pi, 30)
y = torch.sin(x)
torch.manual_seed(0)
a = torch.randn((), requires_grad=True)
b = torch.randn((), requires_grad=True)
c = torch.randn((), requires_grad=True)
d = torch.randn((), requires_grad=True)
learning_rate = 1e-4
for t in range(3):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3
    loss = (y_pred - y).pow(2).sum()
    if t % 2 == 1:
        print(t, loss.item())
    loss.backward()
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None
print(f'Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3')
