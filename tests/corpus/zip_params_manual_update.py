# ruff: noqa
# Manual update of a list of parameters with zip over autograd.grad's results.
import torch
torch.manual_seed(0)
W = torch.randn(2, 2, requires_grad=True)
c = torch.zeros(2, requires_grad=True)
params = [W, c]
x = torch.tensor([1.0, -1.0])
for step in range(3):
    out = torch.tanh(W @ x + c)
    loss = (out - torch.tensor([0.5, -0.5])).pow(2).sum()
    grads = torch.autograd.grad(loss, params)
    with torch.no_grad():
        for p, g in zip(params, grads):
            p -= 0.5 * g
    print(step, round(loss.item(), 5), W.grad is None)
