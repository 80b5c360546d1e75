# ruff: noqa
# Early stopping with patience: stop when the loss has not improved for 2 steps.
import torch
w = torch.tensor([4.0], requires_grad=True)
opt = torch.optim.SGD([w], lr=0.3)
best = float("inf")
bad = 0
step = 0
while True:
    opt.zero_grad()
    loss = (w ** 2).sum()
    loss.backward()
    opt.step()
    step += 1
    if loss.item() < best - 1e-3:
        best = loss.item()
        bad = 0
    else:
        bad += 1
    if bad >= 2 or step > 20:
        break
print(step, best, w)
