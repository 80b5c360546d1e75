# ruff: noqa
# Batch normalization written out (biased variance in the forward, unbiased in the running stat) against nn.BatchNorm1d, values, gradients and running stats.
import torch
torch.manual_seed(24)
x = torch.randn(6, 3, requires_grad=True)
bn = torch.nn.BatchNorm1d(3, momentum=0.1)
gamma = bn.weight.detach().clone().requires_grad_()
beta = bn.bias.detach().clone().requires_grad_()
mean = x.mean(0)
var = x.var(0, unbiased=False)
xhat = (x - mean) / torch.sqrt(var + bn.eps)
mine = gamma * xhat + beta
theirs = bn(x)
print(torch.allclose(mine, theirs, atol=1e-6))
running_mean = 0.9 * torch.zeros(3) + 0.1 * mean.detach()
running_var = 0.9 * torch.ones(3) + 0.1 * x.detach().var(0, unbiased=True)
print(torch.allclose(running_mean, bn.running_mean), torch.allclose(running_var, bn.running_var))
(mine * torch.arange(3.)).sum().backward()
g_mine = x.grad.clone()
x.grad = None
(theirs * torch.arange(3.)).sum().backward()
print(torch.allclose(g_mine, x.grad, atol=1e-5), bn.num_batches_tracked)
bn.eval()
print(bn(x[:2]))
