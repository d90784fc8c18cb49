"""The floor plan as a contract: the package's modules in ordered layers, every import pointing to its
own layer or below, no cycle between folders, read from every import statement of the sources
(function-level ones included, so none hides a tie). Also: the package never imports data_prep/,
inference code never reaches training code, and a function-level import of the package's own code
defers a heavy dependency (Model Garden, transformers, scikit-learn...) its module does not load.

`python tests/test_layering.py` prints the summary: modules per layer, upward imports, cycles."""
import ast
import collections
import os
import re
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "tfdialemb")

LAYERS = (
    ("core", ("tfdialemb", "tfdialemb.core", "tfdialemb.dialogue", "tfdialemb.util",
              "tfdialemb.inference_settings", "tfdialemb.kind_registry", "tfdialemb.method_record")),
    ("converters", ("tfdialemb.converters",)),
    ("text", ("tfdialemb.text",)),
    ("encoders", ("tfdialemb.encoders",)),
    ("losses", ("tfdialemb.losses",)),
    ("layers", ("tfdialemb.layers",)),
    ("data and augmentation", ("tfdialemb.data", "tfdialemb.augment")),
    ("methods", ("tfdialemb.methods",)),
    ("model directories", ("tfdialemb.model_dir",)),
    ("inference", ("tfdialemb.inference",)),
    ("serving and evaluation", ("tfdialemb.serving", "tfdialemb.eval")),
    ("training and baselines", ("tfdialemb.training", "tfdialemb.baselines")),
    ("commands", ("tfdialemb.commands", "tfdialemb.demo", "tfdialemb.bench", "tfdialemb.augment.__main__",
                  "tfdialemb.embedder", "tfdialemb.dialogue_embedder")),
    ("entry points", ("tfdialemb.train", "tfdialemb.pretrain", "tfdialemb.evaluate", "tfdialemb.export",
                      "tfdialemb.encode", "tfdialemb.search", "tfdialemb.compare", "tfdialemb.thesis_grid")),
)
"""Lowest first. Model directories sit above the methods (rebuilding a trained model needs its
method's spec) and below inference (the runtimes open model directories). `tfdialemb.embedder` and
`tfdialemb.dialogue_embedder` are the runtimes' public import paths, re-exported from the top. A
folder's `__main__` is a command (what `python -m` runs, imported by nothing): the augment command
hands augmentation the loader of the models crop and shuffle score with, as a training run does."""
HEAVY = ("tensorflow", "tf_keras", "official", "tensorflow_text", "transformers", "sklearn", "scipy", "matplotlib",
         "gensim", "torch", "sentence_transformers", "safetensors", "jieba")
"""What a function-level import may keep out of a module's import (TensorFlow among them: the data
commands and `import tfdialemb` run without it)."""
TRAINING_SIDE = ("tfdialemb.data.examples", "tfdialemb.training", "tfdialemb.methods")
INFERENCE = ("tfdialemb.serving", "tfdialemb.inference", "tfdialemb.eval")


def _module_files():
    found = {}
    for folder, _, names in os.walk(PACKAGE):
        for name in names:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                module = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                found[module[:-len(".__init__")] if module.endswith(".__init__") else module] = path
    return found


MODULES = _module_files()


def _own(name):
    """The package module `name` is, or is in (`tfdialemb.x.Name` → `tfdialemb.x`)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def _imports(module):
    """(imported module, line, inside a function, external top-level package) of every import statement."""
    path = MODULES[module]
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield alias.name, child.lineno, inside
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")
                    base = ".".join(parts[:len(parts) - child.level + 1] + ([base] if base else []))
                for alias in child.names:
                    yield f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base, child.lineno, inside
            yield from visit(child, inside)

    yield from visit(tree, False)


def _graph():
    """module → {own module: (line, inside a function)}, and module → external packages imported at top level."""
    edges, external = {module: {} for module in MODULES}, {module: set() for module in MODULES}
    for module in MODULES:
        for name, line, inside in _imports(module):
            if name.split(".")[0] == "tfdialemb":
                target = _own(name)
                if target != module and (target not in edges[module] or edges[module][target][1]):
                    edges[module][target] = (line, inside)
            elif not inside:
                external[module].add(name.split(".")[0])
    return edges, external


EDGES, EXTERNAL = _graph()


def layer_of(module):
    """Index in LAYERS of the most specific prefix naming `module`."""
    best = None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or (prefix != "tfdialemb" and module.startswith(prefix + ".")):
                if best is None or len(prefix) > best[0]:
                    best = (len(prefix), index)
    return None if best is None else best[1]


def folder_of(module):
    """`tfdialemb.x` for a module of the subpackage x, the module itself at the top level or when it
    is a folder's `__main__` (a command of its own)."""
    return module if module.endswith(".__main__") else ".".join(module.split(".")[:2])


def _within(module, part):
    return module == part or module.startswith(part + ".")


def upward_imports():
    return sorted((module, target) for module, targets in EDGES.items() for target in targets
                  if layer_of(target) > layer_of(module))


def folder_cycles():
    """The folders that import each other, round a cycle (strongly connected components)."""
    graph = collections.defaultdict(set)
    for module, targets in EDGES.items():
        for target in targets:
            if folder_of(module) != folder_of(target):
                graph[folder_of(module)].add(folder_of(target))
    order, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def connect(node):
        order[node] = low[node] = len(order)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in order:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], order[nxt])
        if low[node] == order[node]:
            component = []
            while not component or component[-1] != node:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                cycles.append(sorted(component))

    for folder in sorted({folder_of(module) for module in MODULES}):
        if folder not in order:
            connect(folder)
    return cycles


def reachable(module, top_level_only=False):
    """The package modules importing `module` runs (top_level_only), or may run."""
    seen, todo = set(), [module]
    while todo:
        current = todo.pop()
        for target, (_, inside) in EDGES[current].items():
            if target not in seen and not (top_level_only and inside):
                seen.add(target)
                todo.append(target)
    return seen


def heavy_imports(module):
    """The heavy packages importing `module` loads."""
    return {name for own in reachable(module, top_level_only=True) | {module} for name in EXTERNAL[own]
            if name in HEAVY}


def test_every_module_has_a_layer():
    assert sorted(module for module in MODULES if layer_of(module) is None) == []


def test_imports_point_down():
    assert upward_imports() == []


def test_no_folder_imports_another_that_imports_it_back():
    assert folder_cycles() == []


def test_the_package_never_imports_data_prep():
    offenders = [(module, name) for module in MODULES for name, _, _ in _imports(module)
                 if name.split(".")[0] == "data_prep"]
    assert offenders == []


@pytest.mark.parametrize("part", INFERENCE)
def test_inference_code_never_reaches_training_code(part):
    """Serving, the runtimes and evaluation never run training-example builders, method training
    code or the training loop, however indirectly (`methods.spec`, the registry a model directory
    is read with, holds no training code)."""
    offenders = sorted((module, target) for module in MODULES if _within(module, part)
                       for target in reachable(module)
                       if target != "tfdialemb.methods.spec"
                       and any(_within(target, side) for side in TRAINING_SIDE))
    assert offenders == []


@pytest.mark.parametrize("part", INFERENCE)
def test_inference_code_does_not_import_the_command_line_pieces(part):
    """`tfdialemb.core.cli` is what the commands share (flag parsing, progress bars); a library reader or
    writer lives in a module of its own (e.g. `tfdialemb.core.files`)."""
    offenders = sorted(module for module in MODULES if _within(module, part)
                       and "tfdialemb.core.cli" in reachable(module))
    assert offenders == []


def test_function_level_imports_defer_something_heavy():
    """An import of the package's own code inside a function is there only to keep a heavy
    dependency out of its module's import (a command's --help, a TF-free reader); one that defers
    nothing belongs at the top."""
    offenders = []
    for module, targets in EDGES.items():
        for target, (line, inside) in targets.items():
            if inside and not heavy_imports(target) - heavy_imports(module):
                offenders.append(f"{module}:{line} {target}")
    assert sorted(offenders) == []


def test_the_layout_page_lists_the_layers_in_order():
    """docs/layout.md's "Layers" section names LAYERS, lowest first."""
    with open(os.path.join(ROOT, "docs", "layout.md"), encoding="utf-8") as f:
        section = f.read().split("\n## Layers\n", 1)[1]
    assert re.findall(r"^\d+\. ([^:\n]+)", section, re.MULTILINE) == [name for name, _ in LAYERS]


def test_each_entry_point_runs_its_command_and_holds_nothing_else():
    """`python -m tfdialemb.NAME` is the documented way to run a command; NAME.py at the top only
    imports `run` from commands/NAME.py and calls it, so the command's code has one home."""
    entries = dict(LAYERS)["entry points"]
    for entry in entries:
        with open(MODULES[entry], encoding="utf-8") as f:
            tree = ast.parse(f.read())
        imports = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
        assert [(node.module, [alias.name for alias in node.names]) for node in imports] == [
            (entry.replace("tfdialemb.", "tfdialemb.commands.", 1), ["run"])], entry
        assert len(tree.body) == 3, entry  # the docstring, the import, `if __name__ == "__main__": run()`
    commands = {module for module in MODULES if module.startswith("tfdialemb.commands.")}
    assert {entry.replace("tfdialemb.", "tfdialemb.commands.", 1) for entry in entries} == commands - {
        "tfdialemb.commands.steps"}


def test_the_public_import_paths_are_the_runtimes():
    from tfdialemb.dialogue_embedder import DialogueEmbedder
    from tfdialemb.embedder import SentenceEmbedder
    from tfdialemb.inference import dialogue_embedder, embedder

    assert SentenceEmbedder is embedder.SentenceEmbedder
    assert DialogueEmbedder is dialogue_embedder.DialogueEmbedder


if __name__ == "__main__":
    counts = collections.Counter(layer_of(module) for module in MODULES)
    for index, (name, _) in enumerate(LAYERS):
        print(f"{index:2d} {name:24s} {counts[index]:3d} modules")
    print(f"imports between package modules: {sum(len(t) for t in EDGES.values())}, "
          f"function-level: {sum(inside for t in EDGES.values() for _, inside in t.values())}")
    print(f"upward imports: {len(upward_imports())}")
    for module, target in upward_imports():
        print(f"  {module} -> {target}")
    print(f"folder-level cycles: {len(folder_cycles())} {folder_cycles()}")
    sys.exit(0)
