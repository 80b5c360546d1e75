#!/usr/bin/env bash
# Installs everything gradtrace and its tests need on a fresh Debian machine.
# Safe to run again: it skips what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

source .ci/python.sh

need_apt=""
command -v dot >/dev/null 2>&1 || need_apt="$need_apt graphviz"
[ -x /usr/bin/chromium ] || need_apt="$need_apt chromium"
command -v node >/dev/null 2>&1 || need_apt="$need_apt nodejs"  # runs the stepper's JavaScript unit tests
if [ -n "$need_apt" ] && command -v apt-get >/dev/null 2>&1; then
  echo "setup: installing Debian packages:$need_apt"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need_apt >/dev/null
fi

# torch: keep an installed one that is recent enough; otherwise the pinned CPU build.
if ! $PY - <<'PYEOF' 2>/dev/null
import sys, torch
major, minor = (int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
sys.exit(0 if (major, minor) >= (2, 1) else 1)
PYEOF
then
  echo "setup: installing torch==2.13.0"
  $PY -m pip install -q "torch==2.13.0"
fi

$PY -m pip install -q -e ".[notebook,test,bench]"
echo "setup: done ($($PY -c 'import torch; print("torch", torch.__version__)'))"
