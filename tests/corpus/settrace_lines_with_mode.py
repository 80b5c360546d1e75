# ruff: noqa
# A learner's trace function that follows the lines of every function, torch's own included, while
# in-place calls run through torch's Python functions: it hears the same lines as without tracing.
import sys
import torch
import torch.nn.functional as F
heard = []
def watch(frame, event, arg):
    heard.append((event, frame.f_code.co_name))
    return watch
x = torch.tensor([1., -2., 3.])
y = x * 2
old = sys.gettrace()
sys.settrace(watch)
F.relu(y, inplace=True)
y[0:2].mul_(2)
z = F.relu(y, inplace=True)
sys.settrace(old)
del old
print(len(heard), heard[:12], y)
