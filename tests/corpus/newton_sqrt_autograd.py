# ruff: noqa
# Newton's method using autograd for f'(x): each iterate is detached and set to require grad again.
import torch

def f(x):
    return x ** 2 - 2.0

x = torch.tensor(3.0, requires_grad=True)
history = []
for it in range(6):
    y = f(x)
    dy, = torch.autograd.grad(y, x)
    x = (x - y / dy).detach().requires_grad_()
    history.append(x.item())
    print(f"iter {it}: x={x.item():.8f} f={y.item():.2e} f'={dy.item():.4f}")
    if abs(y.item()) < 1e-10:
        break
print(history[-1], 2 ** 0.5, x.is_leaf, x.grad)
