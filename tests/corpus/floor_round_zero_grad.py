# ruff: noqa
# floor and round have zero gradient everywhere, so a quantised model does not learn.
import torch
w = torch.tensor([0.3, 1.7, -2.4], requires_grad=True)
q = torch.round(w * 4) / 4
q.sum().backward()
print(q, w.grad)
w.grad = None
f = torch.floor(w) + torch.frac(w)
f.sum().backward()
print(f, w.grad)
w.grad = None
ste = w + (torch.round(w) - w).detach()
ste.sum().backward()
print(ste, w.grad)
