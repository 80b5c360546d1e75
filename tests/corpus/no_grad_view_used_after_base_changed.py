# A view taken under no_grad, its base then changed in place: using the view in a graph raises
import torch

w = torch.arange(6.0, requires_grad=True)
with torch.no_grad():
    first, second = w.view(2, 3)
    first.mul_(10)
print(w)
try:
    y = (second * 2).sum()
except RuntimeError as e:
    print("refused:", str(e)[:40])
z = (w * 2).sum()
z.backward()
print(w.grad)
