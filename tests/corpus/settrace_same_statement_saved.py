# ruff: noqa
# A learner's own trace function on while a saved result is changed in its own statement
# (w.exp().add_(1): backward fails), and while a product is changed whose node saved nothing of it
# (runs). The trace function sees only the program's own calls.
import sys
import torch
torch.manual_seed(0)
calls = []
def watch(frame, event, arg):
    if event == "call":
        calls.append(frame.f_code.co_name)
    return None
w = torch.randn(3, requires_grad=True)
old = sys.gettrace()
sys.settrace(watch)
y = w.exp().add_(1)
s = w.sigmoid()
s2 = s * 2
s2.mul_(3)
sys.settrace(old)
del old
for root in (y, s2):
    try:
        root.sum().backward()
        print("ran", w.grad)
    except RuntimeError as e:
        print("inplace" in str(e))
print(len(calls))
