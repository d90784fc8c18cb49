#!/usr/bin/env bash
# Sets up the virtualenv (run_setup.sh) and runs the fast test suite.
# Arguments go to pytest: `bash run_tests.sh --runslow` adds the slow end-to-end tests,
# `bash run_tests.sh tests/text` runs one folder.
set -euo pipefail
cd "$(dirname "$0")"
source ./run_setup.sh
paths=(tests)
for arg in "$@"; do
  case "$arg" in -*) ;; *) paths=() ;; esac
done
exec "$VENV_PY" -m pytest -q -p no:cacheprovider --durations=10 "$@" "${paths[@]}"
