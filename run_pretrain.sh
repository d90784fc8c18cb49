#!/usr/bin/env bash
# Continued MLM pre-training with the paper's values for one dataset: bash run_pretrain.sh DATASET
# (jddc, ecd, mdc, demo), reading flags/DATASET.cfg. Extra arguments override the flagfile, e.g.
#   bash run_pretrain.sh jddc --init_checkpoint=/path/to/chinese_L-12_H-768_A-12 --max_steps=1000
set -euo pipefail
cd "$(dirname "$0")"
dataset="${1:-}"
if [ -z "$dataset" ] || [ ! -f "flags/$dataset.cfg" ]; then
  echo "usage: bash run_pretrain.sh DATASET [flags...]; DATASET is one of: $(ls flags | grep -v '^mge_' | sed 's/\.cfg$//' | tr '\n' ' ')" >&2
  exit 2
fi
shift
source ./run_setup.sh
source ./run_common.sh
prepare_dataset "$dataset" "flags/$dataset.cfg" "$@"
exec "$VENV_PY" -m tfdialemb.pretrain --flagfile="flags/$dataset.cfg" $DATASET_OVERRIDES "$@"
