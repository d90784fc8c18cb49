"""What starts without TensorFlow: `import tfdialemb`, every data command that reads no
vocabulary (convert, validate, split, stats), and every command's --help (without scikit-learn
and SciPy too). Each runs in a fresh process, which reports the modules it loaded."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TENSORFLOW = ("tensorflow", "tf_keras", "keras", "tensorflow_text")
HEAVY = TENSORFLOW + ("official", "sklearn", "scipy", "matplotlib", "transformers", "gensim")

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


@pytest.mark.parametrize("module, flags", [
    ("tfdialemb.train", ("--method:", "--aggregation:", "--validate_task:", "--strategy:")),
    ("tfdialemb.pretrain", ("--objective:", "--mask_prob:")),
    ("tfdialemb.evaluate", ("--task:", "--embedding:", "--eval_file:")),
    ("tfdialemb.export", ("--kind:", "--warmup_sentences:")),
    ("tfdialemb.compare", ("--config:", "--seeds:", "--turns:")),
    ("tfdialemb.augment", ("--set:", "--fill_mask_model:")),
    ("tfdialemb.thesis_grid", ("--sets:", "--encoders:")),
    ("tfdialemb.bench", ("--what:",)),
    ("tfdialemb.demo", ("--parts:",)),
])
def test_every_command_help_loads_no_tensorflow_nor_scikit_learn(module, flags):
    _, loaded, shown = _loaded(module, "--help")
    assert [flag for flag in flags if flag not in shown] == [] and not loaded & set(HEAVY)


@pytest.mark.parametrize("module, flag", [("tfdialemb.search", "--query: The sentence"),
                                          ("tfdialemb.encode", "--input: UTF-8 text file")])
def test_search_and_encode_help_and_a_missing_corpus_load_no_tensorflow(module, flag, tmp_path):
    _, loaded, shown = _loaded(module, "--help")
    assert flag in shown and not loaded & set(TENSORFLOW)
    missing = ([f"--model_dir={tmp_path}", f"--corpus={tmp_path / 'none.txt'}", "--query=hi"]
               if module == "tfdialemb.search" else [f"--input={tmp_path / 'none.txt'}", f"--output={tmp_path / 'e.npy'}",
                                                      f"--init_checkpoint={tmp_path}"])
    status, loaded, _ = _loaded(module, *missing)
    assert status == 2 and not loaded & set(TENSORFLOW)


def test_training_on_a_missing_file_is_refused_before_tensorflow_loads(tmp_path):
    status, loaded, _ = _loaded("tfdialemb.train", "--method=mge", f"--train_file={tmp_path / 'none.jsonl'}",
                                f"--model_dir={tmp_path / 'model'}", f"--init_checkpoint={tmp_path / 'encoder'}",
                                "--max_steps=1")
    assert status == 2 and not loaded & set(TENSORFLOW)
    assert not (tmp_path / "model").exists()


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


EDITABLE_INSTALL = f"""
import importlib.machinery, os, sys


class EditableInstall:
    '''What `pip install -e` adds: the package found after the directories of sys.path.'''

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.split(".")[0] != "tfdialemb":
            return None
        folder = os.path.join({ROOT!r}, *name.split(".")[:-1])
        return importlib.machinery.PathFinder.find_spec(name, [folder])


sys.meta_path.insert(sys.meta_path.index(importlib.machinery.PathFinder) + 1, EditableInstall)
"""


@pytest.fixture
def parent_of_a_clone(tmp_path):
    """A folder holding a clone named tfdialemb (no __init__.py at its top), and an environment
    whose Python finds the package as an editable install does (a sitecustomize hook)."""
    (tmp_path / "tfdialemb").mkdir()
    (tmp_path / "tfdialemb" / "setup.py").write_text("", encoding="utf-8")
    (tmp_path / "hook").mkdir()
    (tmp_path / "hook" / "sitecustomize.py").write_text(EDITABLE_INSTALL, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "hook")}
    return tmp_path, env


def test_a_command_started_beside_a_clone_named_tfdialemb_says_so(parent_of_a_clone):
    parent, env = parent_of_a_clone
    result = subprocess.run([sys.executable, "-m", "tfdialemb.data", "validate", "--input=x.jsonl"], cwd=parent,
                            env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"error: {parent / 'tfdialemb'} has no __init__.py but was imported as tfdialemb, ahead of the installed "
        "package, whose set-up therefore did not run; start Python in another directory (inside the clone, "
        "for instance)"]


def test_a_script_beside_a_clone_named_tfdialemb_gets_an_import_error_before_tensorflow(parent_of_a_clone):
    parent, env = parent_of_a_clone
    program = ("import sys\ntry:\n    from tfdialemb.embedder import SentenceEmbedder\n"
               "except ImportError as e:\n    print(e, 'tensorflow' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", program], cwd=parent, env=env, capture_output=True, text=True,
                            timeout=300, check=True)
    assert result.stdout.startswith(f"{parent / 'tfdialemb'} has no __init__.py but was imported as tfdialemb")
    assert result.stdout.rstrip().endswith("False")


def test_the_same_command_inside_the_clone_runs(parent_of_a_clone, corpus):
    _, env = parent_of_a_clone
    result = subprocess.run([sys.executable, "-m", "tfdialemb.data", "validate", f"--input={corpus / 'd.jsonl'}"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert (result.returncode, result.stdout.strip()) == (0, f"{corpus / 'd.jsonl'}: 10 valid dialogues, 0 bad line(s)")
