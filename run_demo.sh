#!/usr/bin/env bash
# The main job on its embedded default: embeds the bundled dialogue sentences with the packaged
# all-MiniLM-L6-v2 BERT and prints each sentence's nearest neighbours. Arguments go to
# `python -m tfdialemb.demo` (e.g. --init_checkpoint=DIR --input=FILE).
set -euo pipefail
cd "$(dirname "$0")"
source ./run_setup.sh
exec "$VENV_PY" -m tfdialemb.demo "$@"
