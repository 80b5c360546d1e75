# ruff: noqa
# A tracker object keeps tensors only in a dict attribute; the learner reads them back later.
import torch
class Tracker:
    def __init__(self):
        self.store = {}
    def log(self, key, t):
        self.store[key] = t
tr = Tracker()
w = torch.tensor(2.0, requires_grad=True)
tr.log("sq", w * w)
tr.log("cube", w ** 3)
loss = tr.store["sq"] + tr.store["cube"]
loss.backward()
print(w.grad, list(tr.store))
del tr.store["sq"]
print(len(tr.store), tr.store["cube"].grad_fn.name())
