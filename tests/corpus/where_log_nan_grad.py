# ruff: noqa
# torch.where with log of a negative: the unused branch still poisons the gradient with NaN; the double-where fix.
import torch
x = torch.tensor([-1.0, 0.0, 2.0], requires_grad=True)
y = torch.where(x > 0, torch.log(x), torch.zeros_like(x))
y.sum().backward()
print(y, x.grad)
x.grad = None
safe = torch.where(x > 0, x, torch.ones_like(x))
y2 = torch.where(x > 0, torch.log(safe), torch.zeros_like(x))
y2.sum().backward()
print(y2, x.grad)
