# ruff: noqa
# enable_grad inside no_grad, set_grad_enabled as a call and a context, inference_mode tensors.
import torch
x = torch.tensor([1., 2.], requires_grad=True)
with torch.no_grad():
    a = x * 2
    with torch.enable_grad():
        b = x * 3
torch.set_grad_enabled(False)
c = x * 4
torch.set_grad_enabled(True)
with torch.set_grad_enabled(False):
    d = x * 5
with torch.inference_mode():
    e = x * 6
f = (b + a + c + d).sum()
f.backward()
try:
    e.add_(1)
except RuntimeError as err:
    msg = str(err)[:40]
