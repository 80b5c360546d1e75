# ruff: noqa
# A DQN-style target network: deepcopy, load_state_dict, then a soft (Polyak) update through .data and under no_grad.
import copy
import torch
from torch import nn
torch.manual_seed(0)
q = nn.Linear(3, 2)
target = copy.deepcopy(q)
for p in target.parameters():
    p.requires_grad_(False)
opt = torch.optim.SGD(q.parameters(), lr=0.1)
s = torch.randn(4, 3)
s2 = torch.randn(4, 3)
a = torch.tensor([0, 1, 1, 0])
r = torch.tensor([1.0, 0.0, 0.5, 1.0])
tau = 0.5
for it in range(2):
    with torch.no_grad():
        y = r + 0.9 * target(s2).max(dim=1).values
    q_sa = q(s).gather(1, a.unsqueeze(1)).squeeze(1)
    loss = nn.functional.smooth_l1_loss(q_sa, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    for tp, p in zip(target.parameters(), q.parameters()):
        tp.data.mul_(1 - tau).add_(tau * p.data)
    print(it, loss.item(), target.bias)
with torch.no_grad():
    for tp, p in zip(target.parameters(), q.parameters()):
        tp.copy_(p)
target.load_state_dict(q.state_dict())
print(torch.equal(target.weight, q.weight), target.weight.requires_grad)
