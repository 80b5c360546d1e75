# ruff: noqa
# A hand-written optimizer step function, called under no_grad, with several statements per parameter.
import torch
torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
def sgd_step(params, lr):
    for p in params:
        g = p.grad
        p -= lr * g
        p.grad.zero_()
        norm = p.norm()
    return norm
x = torch.randn(4, 3)
for _ in range(2):
    loss = ((x @ w + b) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        last = sgd_step([w, b], 0.1)
print(w, b, last)
