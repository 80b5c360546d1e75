# ruff: noqa
# relu_ after tanh changes the output tanh saved: backward fails. After pow it does not.
import torch
x = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
p = x ** 2
p.relu_()
p.sum().backward()
print(x.grad)
x.grad = None
t = x.tanh()
t.relu_()
try:
    t.sum().backward()
except RuntimeError as e:
    print("error:", str(e)[:80])
print(x.grad)
