# ruff: noqa
# match with class patterns, guards and captures over tensors.
import torch
x = torch.tensor([1., -2., 3.], requires_grad=True)
outs = []
for item in [x, (x, 2), {"t": x}, 5]:
    match item:
        case torch.Tensor() as t if t.dim() == 1:
            r = t * 2
        case (t, int(k)):
            r = t ** k
        case {"t": t}:
            r = t.abs()
        case _:
            r = None
    if r is not None:
        outs.append(r.sum())
total = sum(outs)
total.backward()
