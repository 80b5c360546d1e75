# ruff: noqa
# Cross-entropy four ways: softmax then log then NLL, log_softmax + nll_loss, cross_entropy, and with label smoothing.
import torch
import torch.nn.functional as F
torch.manual_seed(0)
logits = torch.randn(3, 4, requires_grad=True)
target = torch.tensor([1, 0, 3])
a = -torch.log(torch.softmax(logits, dim=1))[torch.arange(3), target].mean()
b = F.nll_loss(F.log_softmax(logits, dim=1), target)
c = F.cross_entropy(logits, target)
d = F.cross_entropy(logits, target, label_smoothing=0.1)
print(a.item(), b.item(), c.item(), d.item())
ga, = torch.autograd.grad(a, logits, retain_graph=True)
gc, = torch.autograd.grad(c, logits, retain_graph=True)
print(torch.allclose(ga, gc), ga)
c.backward()
print(logits.grad)
print(logits.grad.sum(dim=1))
one_hot = F.one_hot(target, 4).float()
print(torch.allclose(logits.grad, (torch.softmax(logits, 1) - one_hot).detach() / 3))
