# ruff: noqa
# A learner's trace function that follows the lines of its own file only (a comprehension's here), while in-place calls run (one
# through F.relu, one that raises on a shape mismatch, one printing its result): it hears the same events
# as without tracing, and the failing backward after a view's saved value changed is predicted.
import sys
import torch
import torch.nn.functional as F
torch.manual_seed(0)
heard = []
ME = sys._getframe().f_code.co_filename
def watch(frame, event, arg):
    if frame.f_code.co_filename != ME:
        return None
    heard.append((event, frame.f_code.co_name, frame.f_lineno))
    return watch
w = torch.randn(2, 3, requires_grad=True)
b = w * 2
a = b.reshape(-1)
c = torch.randn(6)
old = sys.gettrace()
sys.settrace(watch)
F.relu(a[:2], inplace=True)
done = [t.mul_(o) for t, o in [(a, c)]]
try:
    a.mul_(torch.ones(5))
except RuntimeError as e:
    print(type(e).__name__)
print(a.detach().add_(0))
c.add_(1)
sys.settrace(old)
del old
print(len(heard), heard[-6:])
try:
    b.sum().backward()
except RuntimeError as e:
    print("inplace" in str(e))
