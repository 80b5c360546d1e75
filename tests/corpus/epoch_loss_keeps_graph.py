# ruff: noqa
# The classic leak: total_loss += loss keeps every iteration's graph alive; total_loss += loss.item() does not.
import torch
torch.manual_seed(0)
w = torch.randn(2, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
total_loss = 0
for i in range(2):
    x = torch.randn(2)
    loss = (w * x).sum() ** 2
    opt.zero_grad()
    loss.backward()
    opt.step()
    total_loss += loss
print(total_loss, type(total_loss).__name__, total_loss.grad_fn.name())
print(total_loss.grad_fn.next_functions[0][0].name())
running = 0.0
losses = []
for i in range(2):
    x = torch.randn(2)
    loss = (w * x).sum() ** 2
    opt.zero_grad()
    loss.backward()
    opt.step()
    running += loss.item()
    losses.append(loss.detach())
print(running, type(running).__name__, torch.stack(losses).requires_grad)
try:
    total_loss.backward()
except RuntimeError as e:
    print("backward of the summed epoch loss:", str(e)[:60])
