"""The files the package ships in tfdialemb/resources/ (setup.py's package_data), by name."""
import os

FOLDER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "resources")


def resource_path(name: str) -> str:
    """The path of the shipped file `name` (e.g. "antonyms.txt")."""
    return os.path.join(FOLDER, name)
