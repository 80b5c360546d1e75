# ruff: noqa
# optimizer.zero_grad(set_to_none=False) keeps the same .grad tensor; the default replaces it by None.
import torch
w = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
opt = torch.optim.SGD([w], lr=0.5)
(w * w).sum().backward()
g = w.grad
opt.step()
opt.zero_grad(set_to_none=False)
same_obj = w.grad is g
print(w, g, same_obj)
(w * 3).sum().backward()
print(g, w.grad is g)
opt.zero_grad()
print(w.grad, g)
(w ** 3).sum().backward()
print(w.grad, w.grad is g)
