"""Refuses to run tfdialemb from a directory that merely shares its name.

Started in the folder that holds a clone named `tfdialemb/` (the package installed from it with
`pip install -e`), Python takes the clone itself, a directory without __init__.py ahead of the
installed package on sys.path, for a namespace package: `tfdialemb/__init__.py` never runs, so
tf.keras is not routed to tf-keras and the quiet start-up is skipped, while the modules are still
found through the editable install. Importing this module (the commands do through
`tfdialemb.core.cli`, the runtimes' public import paths directly) stops such a run before TensorFlow
loads: a command with one line and exit status 2, a Python import with an ImportError, both
naming the directory.
"""
import sys
from typing import Optional

from tfdialemb.core import quiet


def shadowing_directory() -> Optional[str]:
    """The directory Python imported as the namespace package tfdialemb; None for the package itself."""
    package = sys.modules.get("tfdialemb")
    if package is None or getattr(package, "__file__", None) is not None:
        return None
    return next(iter(package.__path__), "tfdialemb")


def require_the_package() -> None:
    directory = shadowing_directory()
    if directory is None:
        return
    message = (f"{directory} has no __init__.py but was imported as tfdialemb, ahead of the installed package, "
               "whose set-up therefore did not run; start Python in another directory (inside the clone, "
               "for instance)")
    if quiet.command_arguments(sys.orig_argv) is not None:
        print(f"error: {message}", file=sys.stderr)
        sys.exit(2)
    raise ImportError(message)


require_the_package()
