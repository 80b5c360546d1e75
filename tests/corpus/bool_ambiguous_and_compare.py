# ruff: noqa
# if on a multi-element tensor raises; any()/all() and chained comparisons on 0-d tensors.
import torch
x = torch.tensor([0.5, -1.0], requires_grad=True)
y = x * 2
try:
    if y > 0:
        pass
except RuntimeError as e:
    print("error:", e)
flag = bool((y > 0).any())
s = y.sum()
ok = -5 < s < 5
if s < 0:
    s = -s
s.backward()
print(flag, ok, s, x.grad)
