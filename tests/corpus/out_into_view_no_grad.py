# ruff: noqa
# out= writes into a slice of a tensor in the graph, under no_grad (with grad on, torch refuses out=
# for it): t.sin() saved t, so its backward fails; t.exp() saved its own result, not t, so it runs.
import torch
torch.manual_seed(0)
x = torch.randn(4, requires_grad=True)
t = x * 1
s = t.sin()
e = t.exp()
try:
    torch.mul(torch.ones(2), 2, out=t[0:2])
except RuntimeError as err:
    print("automatic differentiation" in str(err))
with torch.no_grad():
    torch.mul(torch.ones(2), 2, out=t[0:2])
e.sum().backward()
try:
    s.sum().backward()
except RuntimeError as err:
    print("inplace" in str(err))
print(x.grad, t)
