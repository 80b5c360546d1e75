"""One stdlib helper shared by the tracer and the renderers (imports nothing of gradtrace).

Walking or drawing a big graph makes many small acyclic records; Python's cyclic
collector would only spend time on them, so such walks pause it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic garbage collection inside; the collector's previous state comes back after."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
