# ruff: noqa
# Knowledge distillation: a frozen teacher in eval() under no_grad, a student trained on KL divergence at temperature T plus the hard loss.
import torch
import torch.nn.functional as F
from torch import nn
torch.manual_seed(0)
teacher = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.3), nn.Linear(8, 3))
student = nn.Linear(4, 3)
teacher.eval()
opt = torch.optim.SGD(student.parameters(), lr=0.1)
x = torch.randn(6, 4)
y = torch.tensor([0, 1, 2, 0, 1, 2])
T = 2.0
for step in range(2):
    with torch.no_grad():
        t_logits = teacher(x)
    s_logits = student(x)
    soft = F.kl_div(F.log_softmax(s_logits / T, dim=1), F.softmax(t_logits / T, dim=1), reduction="batchmean") * T * T
    hard = F.cross_entropy(s_logits, y)
    loss = 0.7 * soft + 0.3 * hard
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, soft.item(), hard.item(), t_logits.requires_grad)
print(teacher[0].weight.grad, student.weight.grad.shape)
