#!/usr/bin/env bash
# Sets up the virtualenv (run_setup.sh) and runs the fast test suite.
# Arguments go to pytest: `bash run_tests.sh --runslow` adds the slow end-to-end tests,
# `bash run_tests.sh tests/text` runs one folder.
# Tests run in one process per core, at most 4 (pytest-xdist; most of a test's time is one
# single-threaded Python process); TFDIALEMB_TEST_WORKERS=N picks the number, 0 runs in this process.
set -euo pipefail
cd "$(dirname "$0")"
source ./run_setup.sh
paths=(tests)
for arg in "$@"; do
  case "$arg" in -*) ;; *) paths=() ;; esac
done
workers="${TFDIALEMB_TEST_WORKERS:-$(( $(nproc) < 4 ? $(nproc) : 4 ))}"
# loadfile: a file's tests share one worker, so its module fixtures are built once.
exec "$VENV_PY" -m pytest -q -p no:cacheprovider --durations=10 -n "$workers" --dist loadfile "$@" "${paths[@]}"
