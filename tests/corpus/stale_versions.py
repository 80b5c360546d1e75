# ruff: noqa
# Saved at different versions, changed several times: the prediction names the versions PyTorch reports.
import torch
x = torch.tensor([1., 2.], requires_grad=True)
b = x * 1
c = b * b
b.add_(1)
d = b.sin()
for _ in range(2):
    b.mul_(2)
s = (c + d).sum()
try:
    s.backward()
except RuntimeError as e:
    first = str(e)[:60]
t = d.sum()
t.backward()
