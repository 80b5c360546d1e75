# ruff: noqa
# A learner's trace function counts every call while statements that need the recorder's mode run,
# some through torch's Python functions (F.relu with inplace=True, init.normal_, str of a tensor, a
# tensor's __format__, backward): it sees each call as often as without tracing, and a view's in-place
# product still shows what its hidden node saved (c changed after: backward fails).
import sys
from collections import Counter
import torch
import torch.nn.functional as F
torch.manual_seed(0)
calls = Counter()
def watch(frame, event, arg):
    if event == "call":
        calls[frame.f_code.co_name] += 1
    return None
w = torch.randn(2, 3, requires_grad=True)
b = w * 2
a = b.reshape(-1)
c = torch.randn(6)
w2 = torch.zeros(3)
def warm():  # every path once before watching: lazy imports happen here, in each run alike
    t = torch.ones(3)
    F.relu(t[:2], inplace=True)
    torch.nn.init.normal_(t)
    u = torch.ones(2, requires_grad=True)
    (u * 2).sum().backward()
    return str(t.add_(0)) + f"{t.sum().add_(1):.3f}"
warm()
warm()
old = sys.gettrace()
sys.settrace(watch)
F.relu(a[:3], inplace=True)
a.mul_(c)
torch.nn.init.normal_(w2)
text = str(a.detach().add_(0))
line = f"{w2.sum().add_(1):.3f}"
c.add_(1)
h = (w * 3).sum()
h.backward()
sys.settrace(old)
del old
print(sorted(calls.items()), text, line)
try:
    b.sum().backward()
except RuntimeError as e:
    print("inplace" in str(e))
