# ruff: noqa
# Several hooks on the same tensor and a hook on a leaf change the gradient in order.
import torch
x = torch.tensor([1., 2.], requires_grad=True)
hx = x.register_hook(lambda g: g + 1)
y = x * x
y.register_hook(lambda g: g * 2)
y.register_hook(lambda g: g - 0.5)
z = (y * 3).sum()
z.backward()
hx.remove()
print(x.grad)
