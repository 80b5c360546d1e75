# ruff: noqa
# Initialising weights in place: uniform_ on a leaf that requires grad fails outside no_grad; nn.init functions and fill_ under no_grad work.
import torch
import torch.nn as nn
torch.manual_seed(27)
w = torch.zeros(2, 3, requires_grad=True)
try:
    w.uniform_(-1, 1)
except RuntimeError as e:
    print("error:", str(e)[:50])
with torch.no_grad():
    w.uniform_(-1, 1)
print(w, w._version, w.is_leaf)
lin = nn.Linear(3, 2)
nn.init.xavier_uniform_(lin.weight)
nn.init.zeros_(lin.bias)
print(lin.weight, lin.bias, lin.weight.grad_fn)
with torch.no_grad():
    lin.bias.fill_(0.5)
    lin.weight[0].copy_(torch.tensor([1.0, 2.0, 3.0]))
out = lin(torch.ones(1, 3))
out.sum().backward()
print(out, lin.weight.grad, lin.weight._version)
