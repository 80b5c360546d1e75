# ruff: noqa
# SGD with Nesterov momentum, checked step by step against the update written by hand.
import torch
w = torch.tensor([2.0, -3.0], requires_grad=True)
w2 = w.detach().clone()
buf = torch.zeros(2)
opt = torch.optim.SGD([w], lr=0.1, momentum=0.9, nesterov=True)
for step in range(3):
    opt.zero_grad()
    loss = (w ** 2).sum()
    loss.backward()
    opt.step()
    g = 2 * w2
    buf = 0.9 * buf + g
    w2 = w2 - 0.1 * (g + 0.9 * buf)
    print(step, w.detach(), w2, torch.allclose(w.detach(), w2))
