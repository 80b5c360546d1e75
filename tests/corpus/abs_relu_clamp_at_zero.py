# ruff: noqa
# What is the gradient of abs, relu, clamp and sign exactly at 0? The learner checks each one.
import torch
x = torch.tensor([-1.0, 0.0, 1.0], requires_grad=True)
for name in ["abs", "relu", "clamp", "sign", "sqrt_sq"]:
    x.grad = None
    if name == "abs":
        y = x.abs()
    elif name == "relu":
        y = torch.relu(x)
    elif name == "clamp":
        y = x.clamp(min=0.0, max=1.0)
    elif name == "sign":
        y = torch.sign(x) * x
    else:
        y = (x * x).sqrt()
    y.sum().backward()
    print(name, x.grad.tolist())
