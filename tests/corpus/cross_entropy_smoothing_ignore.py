# ruff: noqa
# F.cross_entropy with label_smoothing and ignore_index: rows of ignored targets get no gradient.
import torch
import torch.nn.functional as F
torch.manual_seed(0)
logits = torch.randn(4, 3, requires_grad=True)
target = torch.tensor([0, 2, -100, 1])
loss = F.cross_entropy(logits, target, ignore_index=-100, label_smoothing=0.1)
loss.backward()
print(loss.item())
print(logits.grad)
print("ignored row grad is zero:", bool((logits.grad[2] == 0).all()))
g_smooth = logits.grad.clone()
logits.grad = None
loss_plain = F.cross_entropy(logits, target, ignore_index=-100)
loss_plain.backward()
print("smoothing changes grads:", not torch.equal(g_smooth, logits.grad))
