# ruff: noqa
# torch.distributions: a reparameterized sample and log_prob, differentiated.
import torch
from torch.distributions import Normal
torch.manual_seed(0)
mu = torch.tensor([0., 1.], requires_grad=True)
sigma = torch.tensor([1., 0.5], requires_grad=True)
d = Normal(mu, sigma)
s = d.rsample()
lp = d.log_prob(s.detach()).sum()
loss = (s ** 2).sum() - lp
loss.backward()
print(s, mu.grad, sigma.grad)
