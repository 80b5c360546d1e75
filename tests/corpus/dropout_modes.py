# ruff: noqa
# Dropout with seeds, in training and eval mode.
import torch
from torch import nn
drop = nn.Dropout(0.5)
x = torch.ones(8, requires_grad=True)
torch.manual_seed(1)
a = drop(x)
torch.manual_seed(1)
b = drop(x)
same = torch.equal(a, b)
drop.eval()
c = drop(x)
drop.train()
d = nn.functional.dropout(x, 0.25, training=True)
(a + d).sum().backward()
