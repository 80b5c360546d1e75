# ruff: noqa
# After a failed backward is caught, the failed loss and the frames of the error are freed when the handler ends (a weakref tells).
import weakref
import torch
w = torch.tensor([0.5, -0.5], requires_grad=True)
h = w * 3
out = h.sin()
h.add_(1)
loss = out.sum()
watch = weakref.ref(loss)
try:
    loss.backward()
except RuntimeError as e:
    print("failed:", str(e)[:40])
    h = w * 3
    out = h.sin()
    loss = out.sum()
    print("old loss still held by the error's frames:", watch() is not None)
print("old loss freed after the handler:", watch() is None)
loss.backward()
print(w.grad)
