#!/usr/bin/env bash
# The tracer and fidelity tests again under Python 3.12, where the tracer takes its
# other line-event path, make_dot against torchviz on torchvision models, and the notebook layer under the
# IPython a fresh install gets there (9: it counts the next cell while one runs).
# Uses a Python 3.12 that really runs (pyenv's versions/3.12*, then python3.12 on PATH,
# each tried before it is taken: pyenv's shim is on PATH but runs only where 3.12 is
# the active version); says so and passes when there is none.
# The venv is kept between runs (torch for 3.12 is a large download).
#   bash .ci/py312.sh           # make the venv if missing, then run the tests
#   bash .ci/py312.sh --find    # print the 3.12 interpreter it would use (exit 1: none)
#   bash .ci/py312.sh --venv    # make the venv if missing and print its python; install and test nothing
set -uo pipefail
cd "$(dirname "$0")/.."

runs_312() {
  "$1" -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 12) else 1)' >/dev/null 2>&1
}

find_py312() {
  local root c
  root=${PYENV_ROOT:-$(pyenv root 2>/dev/null || true)}
  local candidates=()
  if [ -n "$root" ]; then
    # newest patch release first
    while IFS= read -r c; do candidates+=("$c"); done < <(ls -d "$root"/versions/3.12*/bin/python 2>/dev/null | sort -rV)
  fi
  candidates+=(python3.12)
  for c in "${candidates[@]}"; do
    if runs_312 "$c"; then
      command -v "$c" 2>/dev/null || echo "$c"
      return 0
    fi
  done
  return 1
}

if [ "${1:-}" = "--find" ]; then
  find_py312 || { echo "py312: no Python 3.12 that runs on this machine" >&2; exit 1; }
  exit 0
fi

if ! py312=$(find_py312); then
  echo "py312: no Python 3.12 that runs on this machine; the 3.12 run is skipped"
  exit 0
fi

venv=${GRADTRACE_PY312_VENV:-${TMPDIR:-/tmp}/gradtrace-py312}
if [ ! -x "$venv/bin/python" ] || ! runs_312 "$venv/bin/python"; then
  echo "py312: making a venv at $venv with $py312" >&2
  rm -rf "$venv"
  "$py312" -m venv "$venv" || exit 1
fi
if [ "${1:-}" = "--venv" ]; then
  echo "$venv/bin/python"
  exit 0
fi
if ! "$venv/bin/python" -c "import torch, torchvision, torchviz, pytest, xdist, hypothesis, psutil, graphviz, IPython" 2>/dev/null; then
  echo "py312: installing torch==2.13.0, torchvision and torchviz (make_dot on real models), the test tools and IPython (the %%gradtrace cell path) into $venv"
  "$venv/bin/python" -m pip install -q "torch==2.13.0" "torchvision==0.28.0" "torchviz==0.0.3" numpy "pytest>=8" "pytest-xdist>=3.5" "hypothesis>=6" psutil \
    "graphviz>=0.20" "graphviz-pure==0.2.2" ipython || exit 1
fi

tests=()
for t in tests/test_tracer_*.py tests/test_recorder_*.py tests/test_fidelity*.py tests/regressions tests/test_fuzz.py tests/test_makedot_models.py tests/test_notebook.py; do
  [ -e "$t" ] && tests+=("$t")
done
echo "py312: $("$venv/bin/python" -c 'import sys, torch; print("Python", sys.version.split()[0], "torch", torch.__version__)')"
workers=${GRADTRACE_TEST_WORKERS:-auto}
PYTHONPATH="$PWD/src" "$venv/bin/python" -m pytest -q -p no:cacheprovider -n "$workers" -m "not browser" "${tests[@]}"
rc=$?
if [ $rc -eq 5 ]; then
  echo "py312: no tests were collected: that is a failure" >&2
  rc=1
fi
exit $rc
