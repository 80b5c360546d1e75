# ruff: noqa
# Gradient checking: centered finite differences element by element in float64, then torch.autograd.gradcheck.
import torch

def f(x):
    return (x.sin() * x ** 2).sum()

x = torch.tensor([0.5, -1.2, 2.0], dtype=torch.float64, requires_grad=True)
y = f(x)
y.backward()
analytic = x.grad.clone()

h = 1e-6
numeric = torch.zeros_like(x)
for i in range(x.numel()):
    with torch.no_grad():
        old = x[i].item()
        x[i] = old + h
        fp = f(x).item()
        x[i] = old - h
        fm = f(x).item()
        x[i] = old
    numeric[i] = (fp - fm) / (2 * h)
print("analytic", analytic)
print("numeric ", numeric)
rel_error = (analytic - numeric).abs().max() / (analytic.abs() + numeric.abs()).max()
print("relative error", rel_error.item(), rel_error.item() < 1e-7)

inp = torch.randn(2, 3, dtype=torch.double, requires_grad=True)
print(torch.autograd.gradcheck(lambda t: (t.tanh() * t).sum(dim=1), (inp,), eps=1e-6, atol=1e-4))
