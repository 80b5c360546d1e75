"""Reading tensors without the learner's own instrumentation seeing it (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

The tracer reads values (``detach``, ``tolist``, ``aminmax``) while the learner's
code may have a ``TorchDispatchMode`` or a ``__torch_function__`` subclass active.
Those reads must not show up in the learner's counts, so they run with torch
function handling and the dispatch mode stack switched off.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch


def quiet() -> Any:
    """A context in which torch calls reach no torch function mode, subclass or dispatch mode.

    Without a dispatch mode active this is torch's own C-level context manager: no
    Python code runs on entering or leaving it, so an interrupt cannot land halfway.
    """
    if torch._C._len_torch_dispatch_stack() == 0:
        return torch._C.DisableTorchFunction()
    return _with_modes_off()


@contextmanager
def _with_modes_off() -> Iterator[None]:
    from torch.utils._python_dispatch import _disable_current_modes

    with torch._C.DisableTorchFunction(), _disable_current_modes():
        yield
