# ruff: noqa
# A model made inside a function dies when the function returns, with its weights, as without tracing;
# and one a loop makes afresh each pass dies when the name takes the next.
import weakref
import torch
from torch import nn
refs = []
def make(x):
    m = nn.Linear(2, 2)
    refs.append(weakref.ref(m.weight))
    return m(x).sum()
out = make(torch.ones(2))
print([r() is None for r in refs])
for i in range(3):
    layer = nn.Linear(2, 1)
    refs.append(weakref.ref(layer.weight))
    h = layer(torch.ones(2))
print([r() is None for r in refs])
