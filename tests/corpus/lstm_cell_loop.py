# ruff: noqa
# An RNN cell unrolled in a loop with a hook on the hidden state.
import torch
import torch.nn as nn
torch.manual_seed(0)
cell = nn.RNNCell(2, 3)
h = torch.zeros(1, 3)
grads = []
xs = torch.randn(3, 1, 2)
for t in range(3):
    h = cell(xs[t], h)
    h.register_hook(lambda g: grads.append(g.clone()))
loss = h.sum()
loss.backward()
print(len(grads), cell.weight_hh.grad)
