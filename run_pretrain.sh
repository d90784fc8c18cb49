#!/usr/bin/env bash
# Continued pre-training with the paper's values for one dataset: bash run_pretrain.sh DATASET.
# DialogueCSE's masked-LM stage (jddc, ecd, mdc, demo) reads flags/DATASET.cfg; BERT-DPT's
# post-training for FGC (ubuntu, douban) reads flags/dpt_DATASET.cfg. Extra arguments override
# the flagfile, e.g.
#   bash run_pretrain.sh jddc --init_checkpoint=/path/to/chinese_L-12_H-768_A-12 --max_steps=1000
set -euo pipefail
cd "$(dirname "$0")"
dataset="${1:-}"
flagfile="flags/$dataset.cfg"
[ -f "$flagfile" ] || flagfile="flags/dpt_$dataset.cfg"
if [ -z "$dataset" ] || [ ! -f "$flagfile" ]; then
  datasets="$(ls flags | grep -v '_' | sed 's/\.cfg$//' || true) $(ls flags | grep '^dpt_' | sed 's/^dpt_//; s/\.cfg$//' || true)"
  echo "usage: bash run_pretrain.sh DATASET [flags...]; DATASET is one of: $(echo $datasets)" >&2
  exit 2
fi
shift
source ./run_setup.sh
source ./run_common.sh
prepare_dataset "$dataset" "$flagfile" "$@"
exec "$VENV_PY" -m tfdialemb.pretrain --flagfile="$flagfile" $DATASET_OVERRIDES "$@"
