#!/usr/bin/env bash
# Contrastive training with the paper's values: bash run_train.sh METHOD DATASET [flags...],
# reading flags/METHOD_DATASET.cfg (e.g. bash run_train.sh mge jddc).
set -euo pipefail
cd "$(dirname "$0")"
method="${1:-}"; dataset="${2:-}"
if [ -z "$method" ] || [ -z "$dataset" ] || [ ! -f "flags/${method}_${dataset}.cfg" ]; then
  echo "usage: bash run_train.sh METHOD DATASET [flags...]; available: $(ls flags | grep '_' | sed 's/\.cfg$//; s/_/ /' | tr '\n' ',')" >&2
  exit 2
fi
shift 2
source ./run_setup.sh
source ./run_common.sh
prepare_dataset "$dataset" "flags/${method}_${dataset}.cfg" "$@"
exec "$VENV_PY" -m tfdialemb.train --flagfile="flags/${method}_${dataset}.cfg" $DATASET_OVERRIDES "$@"
