# ruff: noqa
# nn.Dropout(inplace=True) right after a sigmoid: dropout overwrites the output sigmoid saved, so backward fails; eval mode leaves it alone.
import torch
import torch.nn as nn
torch.manual_seed(8)
x = torch.randn(4, 3, requires_grad=True)
drop = nn.Dropout(p=0.5, inplace=True)
drop.eval()
h = torch.sigmoid(x)
out = drop(h)
print(out is h, h._version)
out.sum().backward()
print(x.grad.shape)
drop.train()
h = torch.sigmoid(x)
out = drop(h)
print(out is h, h._version, (out == 0).sum().item())
try:
    out.sum().backward()
except RuntimeError as e:
    print("backward failed:", str(e)[:60])
