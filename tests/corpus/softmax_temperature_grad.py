# ruff: noqa
# A learnable softmax temperature: the gradient flows into the temperature too.
import torch
logits = torch.tensor([2.0, 1.0, 0.1])
T = torch.tensor(1.0, requires_grad=True)
target = 0
for step in range(3):
    p = torch.softmax(logits / T, dim=0)
    loss = -torch.log(p[target])
    T.grad = None
    loss.backward()
    with torch.no_grad():
        T -= 0.5 * T.grad
    print(step, round(loss.item(), 4), round(T.item(), 4))
