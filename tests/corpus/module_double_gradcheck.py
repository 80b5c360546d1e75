# ruff: noqa
# model.double() for a gradient check: the parameters get float64 data through .data = inside torch (same Parameter objects).
import torch
torch.manual_seed(0)
model = torch.nn.Linear(2, 1)
w = model.weight
model.double()
print(w is model.weight, model.weight.dtype)
x = torch.randn(3, 2, dtype=torch.float64, requires_grad=True)
print(torch.autograd.gradcheck(lambda t: model(t).sum(), (x,)))
model.half()
print(model.weight.dtype)
model.float()
print(model.weight.dtype, model.bias)
