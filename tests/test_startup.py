"""What starts without TensorFlow: `import tfdialemb`, every data command that reads no
vocabulary (convert, validate, split, stats), and their --help. Each runs in a fresh process,
which reports the modules it loaded."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TENSORFLOW = ("tensorflow", "tf_keras", "keras", "tensorflow_text")

RUN_AND_REPORT = """
import json, runpy, sys
sys.argv = {argv!r}
status = 0
try:
    runpy.run_module({module!r}, run_name="__main__", alter_sys=True)
except SystemExit as e:
    status = e.code
sys.stdout.flush()
print("\\nloaded:", json.dumps(sorted({{name.split(".")[0] for name in sys.modules}})), "status:", status)
"""


def _loaded(module, *arguments):
    """(exit status, top-level packages loaded, standard output) of `python -m module arguments...`."""
    program = RUN_AND_REPORT.format(argv=[module, *arguments], module=module)
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300,
                            cwd=ROOT)
    last = result.stdout.rstrip().rpartition("\n")[2]
    assert last.startswith("loaded:"), result.stdout[-2000:] + result.stderr[-2000:]
    packages, _, status = last[len("loaded:"):].rpartition(" status: ")
    return int(status), set(json.loads(packages)), result.stdout


def test_importing_the_package_loads_no_tensorflow():
    result = subprocess.run([sys.executable, "-c", "import sys, tfdialemb; print(sorted(sys.modules))"],
                            capture_output=True, text=True, timeout=300, check=True)
    assert not {name.split(".")[0] for name in eval(result.stdout)} & set(TENSORFLOW)  # pylint: disable=eval-used


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    dialogues = [{"id": f"d{i}", "turns": [{"speaker": "user", "text": f"Hello number {i}, café!"},
                                            {"speaker": "agent", "text": "Fine, thanks."}]} for i in range(10)]
    (folder / "d.jsonl").write_text("".join(json.dumps(d) + "\n" for d in dialogues), encoding="utf-8")
    (folder / "d.txt").write_text("hello there\nhi\n\nhow are you\nfine\n", encoding="utf-8")
    return folder


@pytest.mark.parametrize("command", ["convert", "validate", "split", "stats", "build"])
def test_data_command_help_loads_no_tensorflow(command):
    _, loaded, shown = _loaded("tfdialemb.data", command, "--help")
    assert "--input: Input file" in shown and not loaded & set(TENSORFLOW)


def test_data_commands_without_a_vocabulary_load_no_tensorflow(corpus, tmp_path):
    runs = {
        "convert": ["--format=text", f"--input={corpus / 'd.txt'}", f"--output={tmp_path / 'c.jsonl'}"],
        "validate": [f"--input={corpus / 'd.jsonl'}"],
        "split": [f"--input={corpus / 'd.jsonl'}", f"--output_dir={tmp_path / 'split'}"],
        "stats": [f"--input={corpus / 'd.jsonl'}", f"--output={tmp_path / 'stats.json'}"],
    }
    for command, arguments in runs.items():
        status, loaded, _ = _loaded("tfdialemb.data", command, *arguments)
        assert (command, status, sorted(loaded & set(TENSORFLOW))) == (command, 0, [])
    assert json.loads((tmp_path / "stats.json").read_text())["tokens_per_turn"]["p100"] == 6  # hello number 9 , cafe !
