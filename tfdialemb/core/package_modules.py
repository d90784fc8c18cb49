"""Every module of one of the package's folders imported, once: how a registry loads the package's
own entries (methods, example builders, runtimes, servables), each module registering its own when
imported, with no list of them to keep."""
import functools
import importlib
import pkgutil


@functools.lru_cache(maxsize=None)
def import_package_modules(package: str) -> None:
    """Imports each module of `package` (e.g. "tfdialemb.inference")."""
    for module in pkgutil.iter_modules(importlib.import_module(package).__path__):
        importlib.import_module(f"{package}.{module.name}")
