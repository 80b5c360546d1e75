"""Real traces of small real programs (the tracer runs real torch), shared by the render tests."""

from __future__ import annotations

import functools

from gradtrace import trace_code
from gradtrace.model import Trace

PROGRAMS = {
    "forum": """import torch
x = torch.tensor(42., requires_grad=True)
x2 = x ** 2
x3 = x ** 3
f = x2 + x3
f.backward()
""",
    "rebind": """import torch
x = torch.tensor(42., requires_grad=True)
x = x ** 2
x3 = x ** 3
f = x + x3
x.retain_grad()
f.backward()
""",
    "mutate": """import torch
a = torch.tensor([1., 2., 3.], requires_grad=True)
b = a * 2
c = b ** 2
b.add_(1)
c.sum().backward()
""",
    "vector": """import numpy as np
import torch
x = torch.from_numpy(np.array([1., 2., 3.])).requires_grad_()
y = x * x + 4
y.backward(x)
""",
}


@functools.cache
def traced(name: str) -> Trace:
    return trace_code(PROGRAMS[name], filename=f"{name}.py", raise_errors=False)
