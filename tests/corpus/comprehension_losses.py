# ruff: noqa
# List comprehensions over tensors: per-sample losses, sum() of a list of tensors, zeroing grads in a comprehension, any()/all() on grads.
import torch
torch.manual_seed(0)
w = torch.randn(2, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
xs = [torch.randn(2) for _ in range(3)]
ys = [torch.tensor(1.0), torch.tensor(0.0), torch.tensor(2.0)]
losses = [((w @ x + b) - y) ** 2 for x, y in zip(xs, ys)]
total = sum(losses)
print(type(total).__name__, total.grad_fn.name(), [round(l.item(), 4) for l in losses])
total.backward()
print(w.grad, b.grad)
print(any(p.grad is None for p in (w, b)), all(p.grad.abs().sum() > 0 for p in (w, b)))
[p.grad.zero_() for p in (w, b)]
print(w.grad, b.grad)
mean_loss = torch.stack([((w @ x + b) - y).pow(2) for x, y in zip(xs, ys)]).mean()
mean_loss.backward()
print(w.grad, f"{mean_loss.item()=:.4f}")
