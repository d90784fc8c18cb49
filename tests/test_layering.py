"""Layers point down: the package never imports the data_prep/ scripts, and inference code
(serving, incremental scoring, evaluation, the embedders) never imports training-example builders,
method training code or the training loop. Read from the sources' import statements, function-level
imports included."""
import ast
import os

import pytest

PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tfdialemb")
INFERENCE = ("serving", "inference", "eval", "dialogue_embedder.py", "embedder.py")
TRAINING_SIDE = ("tfdialemb.data.examples", "tfdialemb.methods", "tfdialemb.training")


def _modules(*parts):
    root = os.path.join(PACKAGE, *parts)
    if root.endswith(".py"):
        return [root]
    return [os.path.join(folder, name) for folder, _, names in os.walk(root) for name in names if name.endswith(".py")]


def _imports(path):
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module


def test_the_package_never_imports_data_prep():
    offenders = [(os.path.relpath(path, PACKAGE), name) for path in _modules()
                 for name in _imports(path) if name.split(".")[0] == "data_prep"]
    assert offenders == []


@pytest.mark.parametrize("part", INFERENCE)
def test_inference_code_does_not_import_training_code(part):
    offenders = [(os.path.relpath(path, PACKAGE), name) for path in _modules(part) for name in _imports(path)
                 if any(name == side or name.startswith(side + ".") for side in TRAINING_SIDE)]
    assert offenders == []


@pytest.mark.parametrize("part", INFERENCE)
def test_inference_code_does_not_import_the_command_line_pieces(part):
    """`tfdialemb.cli` is what the commands share (flag parsing, progress bars); a library reader or
    writer lives in a module of its own (e.g. `tfdialemb.files`)."""
    offenders = [(os.path.relpath(path, PACKAGE), name) for path in _modules(part) for name in _imports(path)
                 if name == "tfdialemb.cli"]
    assert offenders == []
