#!/usr/bin/env bash
# The README's test command: lint, types, import contracts, then every test (browser tests included),
# spread over the machine's cores (GRADTRACE_TEST_WORKERS=N to choose; 0 runs them in this process).
set -uo pipefail
cd "$(dirname "$0")/.."
source .ci/python.sh
status=0
lint=""
for d in src tests benchmarks examples assets; do [ -d "$d" ] && lint="$lint $d"; done
$PY -m ruff check $lint || status=1
$PY -m mypy || status=1
PYTHONPATH="src${PYTHONPATH:+:$PYTHONPATH}" $PY -c "import sys; from importlinter.cli import lint_imports_command as c; sys.exit(c())" --no-logo --no-cache || status=1  # import contracts (pyproject)
# Both cores: the browser tests share one worker (see tests/browser/conftest.py), the rest spread over all.
$PY -m pytest -q -p no:cacheprovider -n "${GRADTRACE_TEST_WORKERS:-auto}" --dist loadgroup "$@"
rc=$?
if [ $rc -eq 5 ]; then
  echo "no tests were collected: that is a failure" >&2
  rc=1
fi
[ $rc -ne 0 ] && status=$rc
exit $status
