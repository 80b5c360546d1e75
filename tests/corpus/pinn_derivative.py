# ruff: noqa
# A physics-informed loss: du/dx and d2u/dx2 of a small net by autograd.grad(create_graph=True), then backward through them.
import torch
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(1, 5), torch.nn.Tanh(), torch.nn.Linear(5, 1))
x = torch.linspace(0, 1, 4).unsqueeze(1).requires_grad_()
u = net(x)
du = torch.autograd.grad(u.sum(), x, create_graph=True)[0]
d2u = torch.autograd.grad(du.sum(), x, create_graph=True)[0]
residual = d2u + u
loss = (residual ** 2).mean() + (u[0] - 1) ** 2
loss = loss.squeeze()
loss.backward()
print(du.squeeze(), d2u.squeeze())
print(loss.item(), net[0].weight.grad.squeeze(), x.grad.squeeze())
