# ruff: noqa
# nn.GRU with a learned initial state: h0 gets a gradient; hn equals the last output step.
import torch
from torch import nn
torch.manual_seed(7)
gru = nn.GRU(input_size=2, hidden_size=3, batch_first=True)
x = torch.randn(1, 4, 2)
h0 = torch.zeros(1, 1, 3, requires_grad=True)
out, hn = gru(x, h0)
same_last = torch.equal(out[:, -1], hn[0])
loss = hn.pow(2).sum()
loss.backward()
print(out.shape, same_last, h0.grad, gru.weight_hh_l0.grad.shape)
