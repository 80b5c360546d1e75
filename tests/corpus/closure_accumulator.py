# ruff: noqa
# A closure-based training helper: make_step returns a function that keeps a running loss in nonlocal state and the gradients in a captured list.
import torch

def make_step(params, lr):
    history = []
    total = 0.0
    def step(loss):
        nonlocal total
        for p in params:
            p.grad = None
        loss.backward()
        with torch.no_grad():
            for p in params:
                p.add_(p.grad, alpha=-lr)
        total += loss.item()
        history.append([p.grad.clone() for p in params])
        return total
    return step, history

torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
step, history = make_step([w], 0.1)
x = torch.randn(3)
for i in range(3):
    running = step((w * x).sum() ** 2)
print(running, len(history), history[0][0], w)
