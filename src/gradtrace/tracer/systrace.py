"""The interpreter's own trace-function setter and getter (tracer layer).

Captured once, when the tracer is first imported: while a settrace run goes on, ``sys.settrace`` and
``sys.gettrace`` are stood in for (a program's own trace function is chained, not replaced), and the
driver, the monitoring listener and the recorder's hooks reach the real ones through these names.
"""

from __future__ import annotations

import sys

_real_settrace = sys.settrace
_real_gettrace = sys.gettrace
