# ruff: noqa
# A WGAN-GP gradient penalty: the critic's gradient at random interpolates, its norm pushed to 1, backward into the critic.
import torch
from torch import nn
torch.manual_seed(0)
critic = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))
real = torch.randn(3, 2)
fake = torch.randn(3, 2)
alpha = torch.rand(3, 1)
interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
scores = critic(interp)
grads = torch.autograd.grad(outputs=scores, inputs=interp, grad_outputs=torch.ones_like(scores),
                            create_graph=True, retain_graph=True)[0]
penalty = ((grads.norm(2, dim=1) - 1) ** 2).mean()
loss = critic(fake).mean() - critic(real).mean() + 10 * penalty
loss.backward()
print(grads, penalty.item())
print(critic[0].weight.grad, interp.grad)
