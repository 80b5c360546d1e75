# ruff: noqa
# Differentiable sampling: gumbel_softmax with hard=True (one-hot forward, soft gradient) and rsample of a Normal (the reparameterisation trick).
import torch
import torch.nn.functional as F
torch.manual_seed(0)
logits = torch.tensor([[1.0, 2.0, 0.5]], requires_grad=True)
sample = F.gumbel_softmax(logits, tau=0.5, hard=True)
print(sample, sample.grad_fn.name())
(sample * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
print(logits.grad)
mu = torch.zeros(2, requires_grad=True)
log_std = torch.zeros(2, requires_grad=True)
dist = torch.distributions.Normal(mu, log_std.exp())
z = dist.rsample()
kl = torch.distributions.kl_divergence(dist, torch.distributions.Normal(0.0, 1.0)).sum()
(z.pow(2).sum() + kl).backward()
print(z, mu.grad, log_std.grad)
