"""`bash run_train.sh METHOD FILE.jsonl`: the model directory it names, run with a stand-in
interpreter that prints its arguments (nothing is installed or trained)."""
import hashlib
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _stand_in_venv(tmp_path):
    """A virtualenv run_setup.sh takes as installed (its stamp), whose python prints its arguments."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text('#!/usr/bin/env bash\nprintf "%s\\n" "$@"\n')
    python.chmod(0o755)
    stamp = b"".join(open(os.path.join(ROOT, name), "rb").read() for name in ("setup.py", "run_setup.sh"))
    (venv / ".tfdialemb-stamp").write_text(hashlib.sha256(stamp).hexdigest()[:16] + "\n")
    return venv


def _model_dir(tmp_path, venv, dataset):
    result = subprocess.run(["bash", os.path.join(ROOT, "run_train.sh"), "mge", str(dataset)], capture_output=True,
                            text=True, env=dict(os.environ, TFDIALEMB_VENV=str(venv)), timeout=60, check=True)
    return next(line for line in result.stdout.splitlines() if line.startswith("--model_dir="))


def test_a_split_file_names_the_model_after_its_folder(tmp_path):
    venv = _stand_in_venv(tmp_path)
    for folder in ("multiwoz", "sgd"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "train.jsonl").write_text("{}\n")
    (tmp_path / "chats.jsonl").write_text("{}\n")
    assert _model_dir(tmp_path, venv, tmp_path / "multiwoz" / "train.jsonl") == "--model_dir=runs/mge-multiwoz"
    assert _model_dir(tmp_path, venv, tmp_path / "sgd" / "train.jsonl") == "--model_dir=runs/mge-sgd"
    assert _model_dir(tmp_path, venv, tmp_path / "chats.jsonl") == "--model_dir=runs/mge-chats"
