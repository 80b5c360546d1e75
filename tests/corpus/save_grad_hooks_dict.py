# ruff: noqa
# Debugging gradients of intermediate tensors the forum way: save_grad(name) returns a hook that stores the grad in a dict.
import torch
torch.manual_seed(0)
grads = {}

def save_grad(name):
    def hook(grad):
        grads[name] = grad
    return hook

x = torch.randn(3, requires_grad=True)
y = 3 * x
z = y * y
h1 = y.register_hook(save_grad("y"))
h2 = z.register_hook(save_grad("z"))
z.sum().backward()
print(grads["y"], grads["z"])
print(y.grad)
h1.remove()
h2.remove()

def print_and_scale(grad):
    print("grad arriving at hidden:", grad)
    return grad * 0.5

w = torch.randn(3, requires_grad=True)
hidden = (w * 2).relu()
hidden.register_hook(print_and_scale)
out = (hidden * torch.arange(3.0)).sum()
out.backward()
print(w.grad)
