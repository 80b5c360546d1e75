# ruff: noqa
# Double backward in a loop: the gradient's norm is part of the loss.
import torch
w = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
x = torch.tensor([0.3, 0.7, -1.2])
opt = torch.optim.SGD([w], lr=0.1)
for step in range(3):
    opt.zero_grad()
    loss = ((w * x).sum() - 1.0) ** 2 + (w ** 4).sum() * 0.01
    g, = torch.autograd.grad(loss, w, create_graph=True)
    penalty = g.pow(2).sum()
    total = loss + 0.1 * penalty
    total.backward()
    opt.step()
    print(step, round(total.item(), 5), w.grad)
try:
    second, = torch.autograd.grad(g.sum(), w)
except RuntimeError as e:
    print("freed:", str(e)[:40])
