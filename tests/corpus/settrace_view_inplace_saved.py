# ruff: noqa
# A learner's own trace function on while in-place calls on views run: a view's in-place product whose
# hidden node (inside CopySlices) saved c, then c changed (backward fails); the same call on another
# view, c left alone after (backward runs).
import sys
import torch
torch.manual_seed(0)
calls = []
def watch(frame, event, arg):
    if event == "call":
        calls.append(frame.f_code.co_name)
    return None
w = torch.randn(2, 3, requires_grad=True)
b = w * 2
a = b.reshape(-1)
c = torch.randn(6)
b2 = w * 3
a2 = b2.reshape(-1)
old = sys.gettrace()
sys.settrace(watch)
a.mul_(c)
c.add_(1)
a2.mul_(c)
sys.settrace(old)
del old
for root in (b, b2):
    try:
        root.sum().backward()
        print("ran", w.grad)
    except RuntimeError as e:
        print("inplace" in str(e))
print(len(calls))
