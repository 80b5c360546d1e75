# ruff: noqa
# match with guards and class patterns, the walrus operator, several statements on one line.
import torch
x = torch.tensor([1., 2.], requires_grad=True)
items = [x * 2, 3, "s", (x, x)]
outs = []
for it in items:
    match it:
        case torch.Tensor() if (n := it.numel()) > 1: outs.append(it.sum()); t = it * 2
        case int(k): outs.append(x.sum() * k)
        case (a, b): outs.append((a * b).sum())
        case _: pass
loss = sum(outs); loss.backward(); g = x.grad.clone()
print(g, n)
