# ruff: noqa
# parameters_to_vector and vector_to_parameters for a hand-written optimizer step, plus grads flattened with torch.cat.
import torch
from torch.nn.utils import parameters_to_vector, vector_to_parameters
torch.manual_seed(0)
model = torch.nn.Linear(2, 2)
x = torch.randn(3, 2)
loss = model(x).pow(2).sum()
loss.backward()
theta = parameters_to_vector(model.parameters())
grad = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
print(theta.shape, theta.requires_grad, grad)
with torch.no_grad():
    new_theta = theta - 0.1 * grad
vector_to_parameters(new_theta, model.parameters())
print(model.weight, model.bias, model.weight.is_leaf, model.weight.requires_grad)
loss2 = model(x).pow(2).sum()
print(loss.item(), loss2.item())
model.zero_grad(set_to_none=True)
print(model.weight.grad)
