# ruff: noqa
# Softmax cross-entropy by hand (log-sum-exp trick) against F.cross_entropy, with ignore_index and label smoothing.
import torch
import torch.nn.functional as F
torch.manual_seed(2)
logits = torch.randn(4, 5, requires_grad=True)
target = torch.tensor([1, 0, 4, 2])
m = logits.max(dim=1, keepdim=True).values
lse = m + (logits - m).exp().sum(dim=1, keepdim=True).log()
log_probs = logits - lse
mine = -log_probs[torch.arange(4), target].mean()
theirs = F.cross_entropy(logits, target)
print(mine.item(), theirs.item())
mine.backward(retain_graph=True)
g_mine = logits.grad.clone()
logits.grad = None
theirs.backward()
print(torch.allclose(g_mine, logits.grad), logits.grad.sum(dim=1))
expected = torch.softmax(logits.detach(), dim=1)
expected[torch.arange(4), target] -= 1
print(torch.allclose(expected / 4, logits.grad))
logits.grad.zero_()
t2 = torch.tensor([1, -100, 4, -100])
ign = F.cross_entropy(logits, t2, ignore_index=-100)
ign.backward()
print(ign, logits.grad[1], logits.grad[0])
smooth = F.cross_entropy(logits, target, label_smoothing=0.1)
print(f"{smooth.item():.5f}", smooth.grad_fn.name())
