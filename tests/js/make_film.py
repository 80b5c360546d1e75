"""Print the film of one of the programs below as JSON (for tests/js/: the stepper's helpers read real films).

Run as ``python3 tests/js/make_film.py NAME`` with the checkout's ``src`` on PYTHONPATH; the figures in
the film are PyTorch's own, traced by gradtrace.
"""

from __future__ import annotations

import json
import sys

import torch

from gradtrace import trace_code
from gradtrace.render.film import film

PROGRAMS = {
    # f = x**2 + x**3 at 42, backward three times: the third finds the saved values freed
    "forum": ("x = torch.tensor(42., requires_grad=True)\nf = x ** 2 + x ** 3\n"
              "f.backward(retain_graph=True)\nf.backward()\nf.backward()\n"),
    # a name rebound, then the object it names changed in place, then a backward() that will fail
    "stale": ("a = torch.tensor([1., 2., 3.], requires_grad=True)\nb = a.exp()\nb = b * 1\nc = b ** 2\n"
              "b.add_(1)\nloss = c.sum()\nloss.backward()\n"),
    # the forum's program as a file opens: a docstring and an import, then f = x**2 + x**3 at 42
    "opening": ('"""f = x**2 + x**3 at x = 42."""\nimport torch\n\nlr = 0.1\n'
                "x = torch.tensor(42., requires_grad=True)\nx2 = x ** 2\nx3 = x ** 3\nf = x2 + x3\nf.backward()\n"),
}


def main() -> None:
    name = sys.argv[1]
    trace = trace_code(PROGRAMS[name], {"torch": torch}, raise_errors=False)
    json.dump(film(trace), sys.stdout)


if __name__ == "__main__":
    main()
