#!/usr/bin/env bash
# The main jobs end to end on the generated demo corpus: DialogueCSE (continued MLM, MGE, SR and
# D-STS-style evaluation, SavedModel export), dial2vec (training and the dialogue-embedding
# benchmark vs TF-IDF and LDA) and triple-encoders (CCL, C3L, sequence modelling), each with a
# summary table (15 to 19 minutes on 2 CPU cores). Arguments go to `python -m tfdialemb.demo`
# (e.g. --parts=dial2vec --dial2vec_steps=200); rerunning resumes.
set -euo pipefail
cd "$(dirname "$0")"
source ./run_setup.sh
exec "$VENV_PY" -m tfdialemb.demo "$@"
