"""The seeds' programs and a few classic in-place cases, shared by the tests.

Expected numbers are never typed here: tests compute them by running the same
program with plain ``exec`` (PyTorch's own result) and compare.
"""

import sys
from pathlib import Path

FORUM_ORIGINAL = """\
import torch
x = torch.tensor(42., requires_grad=True)
x2 = x ** 2
x3 = x ** 3
f = x2 + x3
f.backward(retain_graph=False)
"""

WHATIF1 = """\
import torch
x = torch.tensor(42., requires_grad=True)
x = x ** 2
x3 = x ** 3
f = x + x3
x.retain_grad()
f.backward(retain_graph=False)
"""

WHATIF2 = """\
import torch
x = torch.tensor(42., requires_grad=True)
y = x ** 2
x = y ** 3
f = y + x
x.retain_grad()
f.backward(retain_graph=False)
"""

TEMP_VARIABLES = """\
import torch
x = temp0 = torch.tensor(42., requires_grad=True)
x = temp1 = temp0 ** 2
x3 = temp0 ** 3
f = temp1 + x3
f.backward(retain_graph=False)
"""

BLOG_VECTOR = """\
import numpy as np
import torch
x = np.array([1., 2., 3.])
x = torch.from_numpy(x)
x.requires_grad_(True)
y = x*x + 4
y.backward(x)
"""

BLOG_INDEX = """\
import torch
x = torch.tensor([1., 2.], requires_grad=True)
y = x * x + 2
y[0].backward()
"""

BLOG_TYPO = """\
import torch
x = torch.tensor([1., 2.], requires_grad=True)
y = 2 * x[0] * x[0] + 4 * x[1] * [1]
y.backward()
"""

BLOG_FIXED = """\
import torch
x = torch.tensor([1., 2.], requires_grad=True)
y = 2 * x[0] * x[0] + 4 * x[1] * x[1]
y.backward()
"""

INPLACE_STALE = """\
import torch
a = torch.tensor([1., 2., 3.], requires_grad=True)
b = a * 2
c = b * b
b.add_(1)
c.sum().backward()
"""

CUSTOM_FUNCTION = """\
import torch
class Twice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        ctx.save_for_backward(t)
        return t * 2
    @staticmethod
    def backward(ctx, g):
        return g * 2
x = torch.ones(3, requires_grad=True)
y = Twice.apply(x)
y.sum().backward()
"""

SEEDS = {
    "forum_original": FORUM_ORIGINAL,
    "whatif1": WHATIF1,
    "whatif2": WHATIF2,
    "temp_variables": TEMP_VARIABLES,
    "blog_vector": BLOG_VECTOR,
    "blog_index": BLOG_INDEX,
    "blog_typo": BLOG_TYPO,
    "blog_fixed": BLOG_FIXED,
    "inplace_stale": INPLACE_STALE,
}


def run_plain(source: str) -> tuple[dict, BaseException | None]:
    """Run ``source`` with plain exec; the namespace and the exception, if any."""
    ns: dict = {}
    try:
        exec(compile(source, "<plain>", "exec"), ns)
    except Exception as exc:  # the program's own error is part of its result
        return ns, exc
    return ns, None


def gradtrace_command() -> list[str]:
    """The ``gradtrace`` command of the Python running the tests: the entry-point script installed beside it
    (a venv's ``bin/``), else ``python -m gradtrace``. A ``gradtrace`` found on PATH may belong to another Python
    (the system's, when the tests run in a venv that is not activated), and would run another installation."""
    script = Path(sys.executable).with_name("gradtrace")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "gradtrace"]
