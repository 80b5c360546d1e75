# ruff: noqa
# exec and eval inside the program make tensors too.
import torch
x = torch.tensor([1., 2.], requires_grad=True)
y = eval("x * 3")
ns = {"torch": torch, "x": x}
exec("z = x.exp()\nz2 = z + 1", ns)
exec("q = y * 2")
loss = (y + ns["z2"] + q).sum()
loss.backward()
print(x.grad)
