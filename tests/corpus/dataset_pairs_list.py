# ruff: noqa
# A dataset as a list of (x, y) tuples, a metrics dict of lists, and a training loop that unpacks the pairs.
import torch
torch.manual_seed(0)
dataset = [(torch.randn(2), torch.tensor(float(i % 2))) for i in range(4)]
metrics = {"loss": [], "grad_norm": []}
w = torch.zeros(2, requires_grad=True)
b = torch.zeros((), requires_grad=True)
for x, y in dataset:
    pred = torch.sigmoid(w @ x + b)
    loss = -(y * pred.log() + (1 - y) * (1 - pred).log())
    loss.backward()
    metrics["loss"].append(loss.detach())
    metrics["grad_norm"].append(w.grad.norm().item())
    with torch.no_grad():
        w -= 0.5 * w.grad
        b -= 0.5 * b.grad
    w.grad = None
    b.grad = None
last_x, last_y = dataset[-1]
print(torch.stack(metrics["loss"]), metrics["grad_norm"], w, b, last_x)
