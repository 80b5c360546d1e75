#!/usr/bin/env bash
# Sourced by the other .ci scripts: sets PY, the Python that gradtrace is installed into and tested with.
#   PYTHON=/path/to/python   use that one, as it is
#   otherwise                python3, unless it is an externally managed system Python (Debian's
#                            /usr/bin/python3 refuses `pip install`): then a venv in .venv/ made from it,
#                            and every .ci script uses .venv/bin/python from then on
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ -n "${PYTHON:-}" ]; then
  PY=$PYTHON
elif [ -x "$here/.venv/bin/python" ]; then
  PY=$here/.venv/bin/python
elif python3 - <<'PYEOF' 2>/dev/null
import os, sys, sysconfig
managed = os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"))
sys.exit(0 if managed and sys.prefix == sys.base_prefix else 1)
PYEOF
then
  echo "setup: python3 ($(command -v python3)) is managed by the system; gradtrace goes into a venv at .venv/" >&2
  if ! python3 -c "import ensurepip" 2>/dev/null && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing python3-venv" >&2
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
  fi
  python3 -m venv "$here/.venv" || { echo "setup: could not make .venv (on Debian: apt-get install python3-venv)" >&2; exit 1; }
  PY=$here/.venv/bin/python
else
  PY=python3
fi
