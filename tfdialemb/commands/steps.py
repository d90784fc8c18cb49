"""Running the project's own commands as the steps of a longer recipe (the demo, the thesis grid):
each step is printed as a user would type it and run in a fresh process. An output already
written is read instead of computed again only when it is of this very step: an evaluation report
records its arguments and the weights it evaluated (`tfdialemb.evaluate`), any other output a
stamp beside it (`OUTPUT.step.json`, `run_once`); a model trained further since, or other
arguments, make the step run again. So an interrupted recipe resumes where it stopped and never
shows the figures of a model it has since trained on."""
import json
import os
import subprocess
import sys
import time
from typing import Any, Dict, Optional, Sequence

from tfdialemb.core.files import atomic_open, file_sha256

STAMP_SUFFIX = ".step.json"


def run_step(*args: str) -> None:
    """Runs `python -m ARGS`, showing it and its time; stops the recipe if it fails."""
    command = [sys.executable, "-m", *args]
    print("\n$ python -m " + " ".join(args), flush=True)
    started = time.time()
    result = subprocess.run(command)
    if result.returncode != 0:
        raise SystemExit(f"stopped: the command above exited with {result.returncode}")
    print(f"  ({time.time() - started:.0f} s)", flush=True)


def content_fingerprint(path: str) -> Optional[Dict[str, Any]]:
    """What tells `path`'s content from another's under the same name: a directory's weights
    (`weights_fingerprint`), a file's SHA-256; None when it does not exist."""
    from tfdialemb.encoders.checkpoint import weights_fingerprint  # pylint: disable=import-outside-toplevel

    if os.path.isdir(path):
        return weights_fingerprint(path)
    return {"sha256": file_sha256(path)} if os.path.isfile(path) else None


def _read_json(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def report_staleness(path: str, arguments: Sequence[str]) -> Optional[str]:
    """Why the evaluation report at `path` is not one of `evaluate ARGUMENTS`' of the weights its
    checkpoint holds now (no report, other arguments, other weights), or None when it is."""
    report = _read_json(path)
    if not isinstance(report, dict) or "metrics" not in report:
        return "no report" if report is None else "not a report of one model"
    if report.get("arguments") != list(arguments):
        return f"evaluated with other arguments ({report.get('arguments')})"
    checkpoint = report.get("checkpoint")
    try:
        now = content_fingerprint(checkpoint) if checkpoint else None
    except (OSError, ValueError) as e:
        return f"{checkpoint}: unreadable now ({e})"
    if report.get("weights") != now:
        return f"evaluated other weights than {checkpoint} holds now ({_weights_text(report.get('weights'))} " \
               f"there, {_weights_text(now)} now)"
    return None


def _weights_text(fingerprint: Optional[Dict[str, Any]]) -> str:
    if not fingerprint:
        return "none"
    step = f" step {fingerprint['step']}" if "step" in fingerprint else ""
    return f"{fingerprint.get('weights', 'file')}{step} sha256 {fingerprint['sha256'][:12]}"


def evaluation_metrics(path: str, *args: str) -> dict:
    """The metrics of `python -m tfdialemb.evaluate ARGS --output=path`: the report at `path` when
    it is of these arguments and of the weights its model holds now (`report_staleness`), else
    evaluated again."""
    arguments = [*args, f"--output={path}"]
    stale = report_staleness(path, arguments)
    if stale:
        if os.path.exists(path):
            print(f"\n{path}: {stale}; evaluating again", flush=True)
            os.remove(path)
        run_step("tfdialemb.evaluate", *arguments)
    with open(path, encoding="utf-8") as f:
        return json.load(f)["metrics"]


def step_stamp(arguments: Sequence[str], depends_on: Sequence[str]) -> Dict[str, Any]:
    """What an output of `arguments` depends on: the arguments and each path's content."""
    return {"arguments": list(arguments), "depends_on": {path: content_fingerprint(path) for path in depends_on}}


def run_once(output: str, module: str, arguments: Sequence[str], depends_on: Sequence[str] = (),
             discard: Sequence[str] = ()) -> bool:
    """Runs `python -m MODULE ARGUMENTS` (which writes `output`) unless `output` exists with a stamp
    (OUTPUT.step.json) of these arguments and of the content `depends_on` paths (models, input
    files) hold now. A stale output, its stamp and the `discard` paths (an interrupted run's
    leftovers that the command would continue) are removed first; the stamp is written before
    the run, so a rerun after an interruption continues the same step. Returns whether it ran."""
    import shutil  # pylint: disable=import-outside-toplevel

    stamp_path = output + STAMP_SUFFIX
    wanted = step_stamp(arguments, depends_on)
    recorded = _read_json(stamp_path)
    if recorded == wanted and os.path.exists(output):
        return False
    if recorded != wanted:
        if os.path.exists(output) or recorded is not None:
            print(f"\n{output}: made by another step or from other inputs; making it again", flush=True)
        for path in (output, *discard):
            if os.path.isdir(path):
                shutil.rmtree(path)
            elif os.path.exists(path):
                os.remove(path)
        os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
        with atomic_open(stamp_path) as f:
            f.write(json.dumps(wanted, indent=1) + "\n")
    run_step(module, *arguments)
    return True
