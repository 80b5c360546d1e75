# ruff: noqa
# A small Conv2d + BatchNorm2d and a GRU.
import torch
from torch import nn
torch.manual_seed(0)
conv = nn.Conv2d(1, 2, 3, padding=1)
bn = nn.BatchNorm2d(2)
gru = nn.GRU(2, 3, batch_first=True)
img = torch.randn(2, 1, 4, 4)
feat = bn(conv(img)).relu().mean(dim=(2, 3))
seq, h = gru(feat.unsqueeze(1))
loss = seq.sum() + h.sum()
loss.backward()
