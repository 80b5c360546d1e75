# ruff: noqa
# retain_graph=True: a second backward through the same graph adds to .grad.
import torch
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = (x.sin() * x).sum()
y.backward(retain_graph=True)
first = x.grad.clone()
y.backward(retain_graph=True)
y.backward()
try:
    y.backward()
except RuntimeError as e:
    msg = str(e)[:40]
