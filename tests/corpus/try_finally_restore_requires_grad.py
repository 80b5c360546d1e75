# ruff: noqa
# try/finally restores requires_grad after an error in the middle; a with-statement of the learner's own.
import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
class Timer:
    def __init__(self):
        self.entered = 0
    def __enter__(self):
        self.entered += 1
        return self
    def __exit__(self, exc_type, exc, tb):
        return exc_type is ValueError
timer = Timer()
try:
    w.requires_grad_(False)
    y = w * 2
    raise KeyError("boom")
except KeyError:
    caught = True
finally:
    w.requires_grad_(True)
with timer:
    z = (w * 3).sum()
    raise ValueError("swallowed")
z.backward()
print(y.requires_grad, caught, w.grad, timer.entered)
