# ruff: noqa
# torch.func: grad with has_aux, and functional_call of a module with a dict of its parameters.
import torch
from torch.func import functional_call, grad, vmap
torch.manual_seed(0)
model = torch.nn.Linear(3, 1)
params = {k: v.detach() for k, v in model.named_parameters()}
x = torch.randn(4, 3)
y = torch.randn(4, 1)

def loss_fn(p, x, y):
    pred = functional_call(model, p, (x,))
    loss = ((pred - y) ** 2).mean()
    return loss, pred

grads, pred = grad(loss_fn, has_aux=True)(params, x, y)
print({k: g.shape for k, g in grads.items()}, pred.requires_grad)
new_params = {k: params[k] - 0.1 * grads[k] for k in params}
print(loss_fn(params, x, y)[0].item(), loss_fn(new_params, x, y)[0].item())
loss = ((model(x) - y) ** 2).mean()
loss.backward()
print(torch.allclose(model.weight.grad, grads["weight"]), model.bias.grad)

def one(p, xi, yi):
    return loss_fn(p, xi.unsqueeze(0), yi.unsqueeze(0))[0]

per = vmap(grad(one), in_dims=(None, 0, 0))(params, x, y)
print(per["bias"].shape, torch.allclose(per["bias"].mean(0), grads["bias"]))
