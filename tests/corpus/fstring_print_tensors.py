# ruff: noqa
# Printing tensors and their gradients in f-strings, as a learner checks work.
import torch
w = torch.tensor([0.5, -1.0], requires_grad=True)
x = torch.tensor([2.0, 3.0])
y = (w * x).sum()
print(f"y = {y}")
print(f"y = {y.item():.3f}, grad_fn = {y.grad_fn.name()}")
y.backward()
print(f"dy/dw = {w.grad}")
print(f"{w.grad.tolist()=}")
msg = f"w={w.detach().numpy().round(2)} |w|={w.norm():.4f}"
print(msg)
print(repr(y), str(w.grad))
