# ruff: noqa
# A function rebinding a global tensor, and one mutating it.
import torch
state = torch.zeros(2)
w = torch.tensor([1., 2.], requires_grad=True)
def update(t):
    global state
    state = state + t.detach()
def bump():
    state.add_(1)
for i in range(2):
    update(w * (i + 1))
    bump()
out = (w * state).sum()
out.backward()
