"""Every data file of the package ships in a wheel: setup.py's `package_data` patterns, globbed from
each package's folder as setuptools does, cover every file under tfdialemb/ that is not Python."""
import ast
import glob
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _package_data():
    """The `package_data` argument of setup.py's `setuptools.setup(...)` call, read without running it."""
    with open(os.path.join(ROOT, "setup.py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "setup":
            for keyword in node.keywords:
                if keyword.arg == "package_data":
                    return ast.literal_eval(keyword.value)
    raise AssertionError("setup.py's setup() call has no package_data")


def _shipped():
    """The files the patterns select, relative to the repository root."""
    found = set()
    for package, patterns in _package_data().items():
        folder = os.path.join(ROOT, *package.split("."))
        for pattern in patterns:
            found.update(os.path.relpath(path, ROOT) for path in glob.glob(os.path.join(folder, pattern))
                         if os.path.isfile(path))
    return found


def _data_files():
    """The files under tfdialemb/ other than Python sources and their caches."""
    found = set()
    for folder, directories, names in os.walk(os.path.join(ROOT, "tfdialemb")):
        directories[:] = [name for name in directories if name != "__pycache__"]
        found.update(os.path.relpath(os.path.join(folder, name), ROOT) for name in names
                     if not name.endswith((".py", ".pyc")))
    return found


def test_every_data_file_of_the_package_is_in_package_data():
    data_files = _data_files()
    assert {os.path.join("tfdialemb", "demo", "templates.json"),
            os.path.join("tfdialemb", "resources", "antonyms.txt")} <= data_files
    assert sorted(data_files - _shipped()) == []
