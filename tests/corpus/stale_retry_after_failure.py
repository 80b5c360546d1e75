# ruff: noqa
# Backward fails on a stale value; the learner tries again, and then fixes the program.
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 3
z = y.sigmoid()
w = z * 2
z.add_(1)
loss = w.sum()
for attempt in range(2):
    try:
        loss.backward()
    except RuntimeError as e:
        print(attempt, str(e)[:60])
z = y.sigmoid()
loss = (z * 2).sum()
loss.backward()
print(x.grad)
