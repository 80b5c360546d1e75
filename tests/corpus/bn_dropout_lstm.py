# ruff: noqa
# BatchNorm, Dropout and an LSTM in training mode.
import torch
from torch import nn
torch.manual_seed(0)
bn = nn.BatchNorm1d(3)
drop = nn.Dropout(0.5)
lstm = nn.LSTM(3, 2)
x = torch.randn(4, 3)
y = drop(bn(x))
out, (h, c) = lstm(y.unsqueeze(1))
loss = out.sum()
loss.backward()
