"""Running the project's own commands as the steps of a longer recipe (the demo, the thesis grid):
each step is printed as a user would type it and run in a fresh process; a report already written
is read instead of computed again, so an interrupted recipe resumes where it stopped."""
import json
import os
import subprocess
import sys
import time


def run_step(*args: str) -> None:
    """Runs `python -m ARGS`, showing it and its time; stops the recipe if it fails."""
    command = [sys.executable, "-m", *args]
    print("\n$ python -m " + " ".join(args), flush=True)
    started = time.time()
    result = subprocess.run(command)
    if result.returncode != 0:
        raise SystemExit(f"stopped: the command above exited with {result.returncode}")
    print(f"  ({time.time() - started:.0f} s)", flush=True)


def evaluation_metrics(path: str, *args: str) -> dict:
    """The metrics of `python -m tfdialemb.evaluate ARGS --output=path`, run unless it exists."""
    if not os.path.exists(path):
        run_step("tfdialemb.evaluate", *args, f"--output={path}")
    with open(path, encoding="utf-8") as f:
        return json.load(f)["metrics"]
