# ruff: noqa
# Nested no_grad / enable_grad / inference_mode / set_grad_enabled: which results get a grad_fn.
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
with torch.no_grad():
    a = x * 2
    with torch.enable_grad():
        b = x * 3
        with torch.inference_mode():
            c = x * 4
        d = b * 2
    e = b + 1
torch.set_grad_enabled(False)
f = x * 5
torch.set_grad_enabled(True)
g = x * 6
print([t.requires_grad for t in (a, b, c, d, e, f, g)], c.is_inference())
(d.sum() + g.sum()).backward()
print(x.grad)
try:
    (c * x).sum().backward()
except RuntimeError as err:
    print("error:", str(err)[:50])
print(x.grad)
