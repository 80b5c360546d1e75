# ruff: noqa
# load_state_dict copies into parameters in place; deepcopy makes new ones; nn.init changes them in place.
import copy
import torch
import torch.nn as nn
torch.manual_seed(0)
a = nn.Linear(2, 2)
b = copy.deepcopy(a)
nn.init.constant_(b.bias, 0.5)
nn.init.normal_(b.weight)
a.load_state_dict(b.state_dict())
x = torch.ones(1, 2)
y = a(x).sum()
y.backward()
with torch.no_grad():
    a.weight.fill_(1.)
print(a.weight, b.weight.grad, a.bias.grad)
