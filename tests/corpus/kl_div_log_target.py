# ruff: noqa
# F.kl_div expects log-probabilities as input; the learner passes probabilities by mistake first.
import torch
import torch.nn.functional as F
torch.manual_seed(0)
logits = torch.randn(2, 4, requires_grad=True)
target = torch.softmax(torch.randn(2, 4), dim=1)
wrong = F.kl_div(torch.softmax(logits, dim=1), target, reduction="batchmean")
right = F.kl_div(F.log_softmax(logits, dim=1), target, reduction="batchmean")
print(wrong.item(), right.item())
right.backward()
print(logits.grad.sum(dim=1))
logits.grad = None
lt = F.kl_div(F.log_softmax(logits, dim=1), target.log(), reduction="batchmean", log_target=True)
lt.backward()
print(torch.allclose(lt, right))
