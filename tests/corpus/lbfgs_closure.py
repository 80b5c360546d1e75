# ruff: noqa
# LBFGS calls the closure several times per step; backward runs inside it.
import torch
w = torch.tensor([3., -2.], requires_grad=True)
opt = torch.optim.LBFGS([w], lr=0.5, max_iter=4)
calls = 0
def closure():
    global calls
    calls += 1
    opt.zero_grad()
    loss = ((w - 1) ** 2).sum()
    loss.backward()
    return loss
for _ in range(2):
    opt.step(closure)
print(calls, w)
