# ruff: noqa
# Order mistakes: step() before any backward does nothing; requires_grad set after the op is too late; float64 data meets float32 weights.
import numpy as np
import torch
torch.manual_seed(0)
model = torch.nn.Linear(2, 1)
opt = torch.optim.SGD(model.parameters(), lr=1.0)
before = model.weight.clone()
opt.step()
print(torch.equal(before, model.weight), model.weight.grad)
a = torch.tensor([1.0, 2.0])
b = a * 3
a.requires_grad = True
print(b.requires_grad, a.requires_grad)
c = a * 3
print(c.requires_grad)
data = torch.from_numpy(np.array([[1.0, 2.0]]))
try:
    model(data)
except RuntimeError as e:
    print(data.dtype, "->", e)
out = model(data.float())
out.sum().backward()
opt.step()
print(model.weight, model.bias)
