# ruff: noqa
# A deleted model is freed at once, with its parameters: weak references to them die, as without tracing.
import gc
import weakref
import torch
from torch import nn
model = nn.Linear(2, 2)
y = model(torch.ones(2))
r_model = weakref.ref(model)
r_weight = weakref.ref(model.weight)
del model, y
print(r_model() is None, r_weight() is None)
