"""A command run in a subprocess that first imports a test module and calls its `register_toy()`, as a
user's own package registers its methods or evaluators before calling a command's `run()`."""
import os
import subprocess
import sys

LAUNCHER = """
import sys
sys.path[:0] = [{support!r}, {folder!r}]
import {module}
{module}.register_toy()
from tfdialemb import {command}
sys.argv = [{command!r}] + sys.argv[1:]
{command}.run()
"""
SUPPORT = os.path.dirname(os.path.abspath(__file__))
"""The tests' helpers (tiny_bert, tiny_corpus, ...), which a toy module imports."""


def run_registered(test_file: str, command: str, *flags: str, status: int = 0) -> subprocess.CompletedProcess:
    """`python -m tfdialemb.COMMAND FLAGS` with `test_file`'s toy registered; asserts the exit status."""
    folder, name = os.path.split(os.path.abspath(test_file))
    launcher = LAUNCHER.format(support=SUPPORT, folder=folder, module=os.path.splitext(name)[0], command=command)
    result = subprocess.run([sys.executable, "-c", launcher, *flags], capture_output=True, text=True, timeout=300,
                            env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    assert result.returncode == status, result.stderr[-3000:]
    return result
