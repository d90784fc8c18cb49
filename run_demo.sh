#!/usr/bin/env bash
# The main job end to end on the generated demo corpus: corpus, SR and D-STS-style sets, the
# untrained encoder's scores, continued MLM pre-training, MGE (DialogueCSE) training, evaluation,
# SavedModel export and a summary table (about 6 minutes on 2 CPU cores). Arguments go to
# `python -m tfdialemb.demo` (e.g. --workdir=DIR --mge_steps=200); rerunning resumes.
set -euo pipefail
cd "$(dirname "$0")"
source ./run_setup.sh
exec "$VENV_PY" -m tfdialemb.demo "$@"
