# ruff: noqa
# A detached alias shares the version counter: changing it makes a saved value stale; .data does not.
import torch
x = torch.tensor([1., 2.], requires_grad=True)
y = x.exp()
d = y.detach()
d.add_(1)
s = y.sum()
try:
    s.backward()
except RuntimeError as e:
    failed = True
x2 = torch.tensor([1., 2.], requires_grad=True)
y2 = x2.exp()
y2.data.add_(1)
s2 = y2.sum()
s2.backward()
print(x2.grad)
