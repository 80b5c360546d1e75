#!/usr/bin/env bash
# The tracer and fidelity tests again under Python 3.12, where the tracer takes its
# other line-event path, and make_dot against torchviz on torchvision models.
# Uses pyenv's 3.12 when present; says so and passes when there is none.
# The venv is kept between runs (torch for 3.12 is a large download).
set -uo pipefail
cd "$(dirname "$0")/.."

py312=""
for c in python3.12 "$(pyenv root 2>/dev/null)"/versions/3.12*/bin/python; do
  if command -v "$c" >/dev/null 2>&1 || [ -x "$c" ]; then py312=$c; break; fi
done
if [ -z "$py312" ]; then
  echo "py312: no Python 3.12 on this machine; the 3.12 run is skipped"
  exit 0
fi

venv=${GRADTRACE_PY312_VENV:-${TMPDIR:-/tmp}/gradtrace-py312}
if [ ! -x "$venv/bin/python" ]; then
  "$py312" -m venv "$venv" || exit 1
fi
if ! "$venv/bin/python" -c "import torch, torchvision, torchviz, pytest, hypothesis, psutil, graphviz, IPython" 2>/dev/null; then
  echo "py312: installing torch==2.13.0, torchvision and torchviz (make_dot on real models), the test tools and IPython (the %%gradtrace cell path) into $venv"
  "$venv/bin/python" -m pip install -q "torch==2.13.0" "torchvision==0.28.0" "torchviz==0.0.3" numpy "pytest>=8" "pytest-xdist>=3.5" "hypothesis>=6" psutil \
    "graphviz>=0.20" "graphviz-pure==0.2.2" ipython || exit 1
fi

tests=()
for t in tests/test_tracer_*.py tests/test_recorder_*.py tests/test_fidelity*.py tests/regressions tests/test_fuzz.py tests/test_makedot_models.py; do
  [ -e "$t" ] && tests+=("$t")
done
echo "py312: $("$venv/bin/python" -c 'import sys, torch; print("Python", sys.version.split()[0], "torch", torch.__version__)')"
PYTHONPATH="$PWD/src" "$venv/bin/python" -m pytest -q -p no:cacheprovider -m "not browser" "${tests[@]}"
rc=$?
if [ $rc -eq 5 ]; then
  echo "py312: no tests were collected: that is a failure" >&2
  rc=1
fi
exit $rc
