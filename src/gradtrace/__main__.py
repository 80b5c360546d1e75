"""``python -m gradtrace``: the same as the ``gradtrace`` command (see :mod:`gradtrace.cli`)."""

from __future__ import annotations

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
