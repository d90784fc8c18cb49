"""A command's --help lists the flags it defines.

absl's --help shows the key flags of the main module only. A flag defined through a shared helper
(a `tfdialemb.core.options.Option`, `precision.define_flags`, `data_prep.set_flags`) is the helper's
key flag unless the command adopts it after defining it, and is then hidden from --help (only
--helpfull shows it). The check runs in one fresh process: each command's flags are defined,
compared with its key flags, and removed before the next command defines its own.
"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = r"""
import importlib, json
from absl import flags

FLAGS = flags.FLAGS


def ours():
    return {flag.name for module, defined in FLAGS.flags_by_module_dict().items()
            if module.startswith(("tfdialemb", "data_prep")) for flag in defined}


def hidden(module_name, define):
    before = set(FLAGS)
    define()
    defined = ours() - before
    shown = {flag.name for flag in FLAGS.get_key_flags_for_module(module_name)}
    for name in set(FLAGS) - before:
        delattr(FLAGS, name)
    return sorted(defined - shown)


def by_import(module_name):
    return lambda: importlib.import_module(module_name)


def by_function(module_name, function="define_flags"):
    return lambda: getattr(importlib.import_module(module_name), function)()


def task_options():
    from tfdialemb.baselines import sources  # registers the baselines' sources
    from tfdialemb.eval.sources import source_options
    from tfdialemb.eval.evaluator import evaluators
    return {option.name for _, option in source_options()} | {
        option.name for evaluator in evaluators().values() for option in evaluator.options}


commands = {
    "tfdialemb.data.__main__": by_import("tfdialemb.data.__main__"),
    "tfdialemb.commands.encode": by_import("tfdialemb.commands.encode"),
    "tfdialemb.commands.search": by_import("tfdialemb.commands.search"),
    "tfdialemb.commands.evaluate": by_import("tfdialemb.commands.evaluate"),
    "tfdialemb.commands.export": by_function("tfdialemb.commands.export"),
    "tfdialemb.commands.compare": by_function("tfdialemb.commands.compare"),
    "tfdialemb.bench.__main__": by_import("tfdialemb.bench.__main__"),
    "tfdialemb.augment.__main__": by_import("tfdialemb.augment.__main__"),
    "data_prep.make_demo_corpus": by_function("data_prep.make_demo_corpus"),
    "data_prep.build_sr_set": by_function("data_prep.build_sr_set"),
    "data_prep.build_sts_set": by_function("data_prep.build_sts_set"),
    "data_prep.build_stp_set": by_function("data_prep.build_stp_set"),
    "data_prep.build_selection_set": by_function("data_prep.build_selection_set"),
}
report = {name: hidden(name, define) for name, define in commands.items()}
report["tfdialemb.commands.evaluate"] = sorted(set(report["tfdialemb.commands.evaluate"]) - task_options())
print(json.dumps(report))
"""


def test_every_command_lists_its_own_flags_in_help():
    """augment's flags, --overwrite, --input/--output of the set builders and the precision flags
    of encode, evaluate and export appear in --help (evaluate's task and embedding options are left to
    --helpfull, which names each one's tasks)."""
    import json

    result = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=300,
                            env=dict(os.environ, PYTHONPATH=ROOT))
    assert result.returncode == 0, result.stderr[-3000:]
    hidden = json.loads(result.stdout.strip().splitlines()[-1])
    assert hidden == {name: [] for name in hidden}, hidden


def _console_scripts():
    """name → "module:function" of setup.py's console scripts."""
    import ast

    tree = ast.parse(open(os.path.join(ROOT, "setup.py"), encoding="utf-8").read())
    entries = next(node for node in ast.walk(tree) if isinstance(node, ast.Dict)
                   and any(isinstance(k, ast.Constant) and k.value == "console_scripts" for k in node.keys))
    scripts = ast.literal_eval(entries.values[0])
    return dict(script.split("=") for script in scripts)


def _help(program, *argv):
    result = subprocess.run([sys.executable, *program, "--help", *argv], cwd=ROOT, capture_output=True, text=True,
                            timeout=300, env=dict(os.environ, PYTHONPATH=ROOT))
    return result.returncode, result.stdout + result.stderr


def test_console_scripts_show_the_help_of_their_python_m_command():
    """A console script runs `run()` from a `__main__` of its own (pip's wrapper), so absl would show
    that wrapper's empty docstring and no flags: each shows the usage and flags `python -m` shows,
    only the program's name differing. Every script names a module's `run`."""
    scripts = _console_scripts()
    assert {name: target.split(":")[1] for name, target in scripts.items()} == {name: "run" for name in scripts}
    assert "tfdialemb-train" in scripts and "tfdialemb-data" in scripts
    for name, usage, flag in (("tfdialemb-encode", "Encodes lines of text", "--input: UTF-8 text file"),
                              ("tfdialemb-train", "Trains a method on dialogues", "--init_checkpoint: Encoder")):
        module, function = scripts[name].split(":")
        entry = module.replace("tfdialemb.commands.", "tfdialemb.")  # what `python -m` runs, documented
        wrapper = f"import sys; sys.argv[0] = {name!r}; from {module} import {function}; sys.exit({function}())"
        script_status, script_help = _help(["-c", wrapper])
        module_status, module_help = _help(["-m", entry])
        assert script_status == module_status
        assert usage in script_help and flag in script_help
        differing = [(a, b) for a, b in zip(script_help.splitlines(), module_help.splitlines()) if a != b]
        assert differing == [(f"{name}:", os.path.join(ROOT, *entry.split(".")) + ".py:")], differing[:3]
