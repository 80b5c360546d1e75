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

import torch


@contextmanager
def quiet() -> Iterator[None]:
    """Torch calls made inside reach no torch function mode, subclass or dispatch mode."""
    with torch._C.DisableTorchFunction():
        if torch._C._len_torch_dispatch_stack() == 0:
            yield
            return
        from torch.utils._python_dispatch import _disable_current_modes

        with _disable_current_modes():
            yield
