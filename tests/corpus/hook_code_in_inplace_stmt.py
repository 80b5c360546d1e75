# ruff: noqa
# Hooks written in the program run during statements that also change tensors in place.
import torch
log = []
def hook(g):
    scaled = g * 2
    log.append(scaled.sum().item())
    return scaled
x = torch.tensor([1., 2.], requires_grad=True)
acc = torch.zeros(2)
y = x * 3
y.register_hook(hook)
y.sum().backward(); acc += x.grad
z = (x * x)
z.register_hook(hook)
z.sum().backward(retain_graph=True); acc.add_(x.grad)
print(log, acc)
