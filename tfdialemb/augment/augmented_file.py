"""Writing an augmented dialogue file: streamed in chunks, resumable, complete or absent.

For every input dialogue the output holds the original (`labels.source_id` its own id,
`labels.augmentations` empty) and then, for each operation and each view, the augmented dialogue
where the operation applies, with id "{id}/{operation}" (one view) or "{id}/{operation}/{k}"
(view k of several). View k draws with seed `view_seed(seed, k)`.

The input is read twice: once to validate it and count it (before any model runs), then in
chunks of `chunk_size` dialogues. Each finished chunk is written atomically into the sidecar
directory "{output}.partial" beside the output, with a fingerprint of the input's content, of
every setting and of the models' weights; a run killed at any point leaves finished chunks there,
and the same command continues after the last of them. Each chunk's result depends only on that
chunk (its batches start at its first dialogue, and the operations forget their kept embeddings
at each batch), so the resumed file is byte for byte the uninterrupted one. The output is
assembled from the chunks once all are done, like the released make_augmentations.py's per-batch
chunks with `skip_existing`, and the sidecar then removed; a run killed between the two is
finished by the same command, which assembles again without loading a model. A different input,
setting or model (a retrained one included) is refused rather than mixed in; a run that stops
before its first chunk (a model refused, say) removes the sidecar, which held nothing to keep.
"""
import collections
import dataclasses
import hashlib
import itertools
import json
import os
import re
import shutil
from typing import Any, Callable, Counter, Dict, Iterator, List, Mapping, Optional, Sequence

from tfdialemb.augment.base import AUGMENTATIONS, SOURCE_ID, applied
from tfdialemb.augment.operations import OperationSet
from tfdialemb.dialogue import Dialogue, SeenIds, read_dialogues
from tfdialemb.core.files import atomic_open, check_output, directory_lock, file_fingerprint, remove_leftovers

PARTIAL_SUFFIX = ".partial"
FINGERPRINT = "fingerprint.json"
CHUNK = "chunk-{:06d}.jsonl"
CHUNK_PATTERN = re.compile(r"chunk-(\d{6})\.jsonl")
FORMAT_VERSION = 1


def view_seed(seed: int, view: int) -> int:
    """The seed of view `view`: the run's own for view 0 (an operation used alone with --seed draws
    what view 0 does), a 31-bit hash of (seed, view) for the others."""
    if view == 0:
        return seed
    return int.from_bytes(hashlib.sha256(f"{seed}/{view}".encode()).digest()[:4], "little") >> 1


def view_id(dialogue_id: str, operation: str, view: int, views: int) -> str:
    return f"{dialogue_id}/{operation}" if views == 1 else f"{dialogue_id}/{operation}/{view}"


def original(dialogue: Dialogue) -> Dialogue:
    """The original as written to the output: labelled as its own source, with no augmentations."""
    return dataclasses.replace(dialogue, labels={**dialogue.labels, SOURCE_ID: dialogue.id, AUGMENTATIONS: []})


@dataclasses.dataclass(frozen=True)
class Plan:
    """What a run writes; its `fingerprint` decides whether a partial run may be continued."""

    input_path: str
    output_path: str
    operations: Sequence[str]
    views: int = 1
    seed: int = 0
    batch_size: int = 32
    chunk_size: int = 512
    settings: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Everything else the result depends on but the models (set name, operation flags)."""
    models: Mapping[str, Sequence[str]] = dataclasses.field(default_factory=dict)
    """Model flag -> the directories it names, fingerprinted by their weights (a retrained model
    is another model, `fm`, `fm/` and its absolute path the same one)."""

    def __post_init__(self):
        for name in ("views", "batch_size", "chunk_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")

    @property
    def partial_dir(self) -> str:
        return self.output_path + PARTIAL_SUFFIX

    def fingerprint(self) -> Dict[str, Any]:
        from tfdialemb.encoders.checkpoint import weights_fingerprint  # pylint: disable=import-outside-toplevel

        source = file_fingerprint(self.input_path)
        return json.loads(json.dumps({
            "format": FORMAT_VERSION, "input": {"size": source["size"], "sha256": source["sha256"]},
            "operations": list(self.operations), "views": self.views, "seed": self.seed,
            "batch_size": self.batch_size, "chunk_size": self.chunk_size, "settings": dict(self.settings),
            "models": {flag: [weights_fingerprint(path) for path in paths] for flag, paths in self.models.items()}}))


def scan_input(plan: Plan) -> int:
    """Validates the whole input (the first bad line raises), refuses dialogues that are already
    augmented or whose id an augmented one would take; returns the number of dialogues. Memory
    holds the ids as hashes (`SeenIds`) and only the ids with a "/", which a view id has."""
    ids = SeenIds()
    slashed = []
    for dialogue in read_dialogues(plan.input_path):
        if applied(dialogue):
            raise ValueError(f"{plan.input_path}: dialogue {dialogue.id!r} is already augmented "
                             f"({', '.join(applied(dialogue))}); give the original dialogues")
        ids.add(dialogue.id)
        if "/" in dialogue.id:
            slashed.append(dialogue.id)
    if not ids:
        raise ValueError(f"{plan.input_path}: has no dialogues to augment")
    for taken in slashed:
        for operation in plan.operations:
            for view in range(plan.views):
                suffix = view_id("", operation, view, plan.views)
                dialogue_id = taken[:-len(suffix)]
                if taken.endswith(suffix) and dialogue_id in ids:
                    raise ValueError(f"{plan.input_path}: the id {taken!r} of an input dialogue is the id "
                                     f"the {operation} view of {dialogue_id!r} would get; rename it")
    return len(ids)


def augment_chunk(dialogues: Sequence[Dialogue], operations: OperationSet, plan: Plan,
                  on_batch: Optional[Callable[[int], None]] = None) -> List[str]:
    """The output lines of one chunk: each original followed by its views, batch by batch;
    `on_batch(n)` is told after each batch of n dialogues."""
    lines = []
    for start in range(0, len(dialogues), plan.batch_size):
        batch = dialogues[start:start + plan.batch_size]
        operations.start_batch()
        views: Dict[tuple, List[Optional[Dialogue]]] = {}
        for view in range(plan.views):
            operations.set_seed(view_seed(plan.seed, view))
            for operation in operations.operations:
                views[operation.name, view] = operation.augment(batch)
        for i, dialogue in enumerate(batch):
            lines.append(original(dialogue).to_line())
            for operation in operations.operations:
                for view in range(plan.views):
                    result = views[operation.name, view][i]
                    if result is not None:
                        named = dataclasses.replace(result, id=view_id(dialogue.id, operation.name, view, plan.views))
                        lines.append(named.to_line())
        if on_batch is not None:
            on_batch(len(batch))
    return lines


def _finished_chunks(directory: str) -> int:
    found = sorted(int(m.group(1)) for m in map(CHUNK_PATTERN.fullmatch, os.listdir(directory)) if m)
    if found != list(range(len(found))):
        raise ValueError(f"{directory}: chunk files are not consecutive from 0 ({found[:10]}...); "
                         "remove the directory to start afresh")
    return len(found)


def _same_run(plan: Plan, wanted: Dict[str, Any], overwrite: bool) -> bool:
    """Whether the sidecar directory holds chunks of this very run; a ValueError naming what
    differs when it holds another run's chunks (unless `overwrite`, which discards them). One
    with no chunk holds nothing to lose: another run takes it over."""
    path = os.path.join(plan.partial_dir, FINGERPRINT)
    if not os.path.isfile(path):
        return False
    with open(path, encoding="utf-8") as f:
        found = json.load(f)
    if found == wanted:
        return True
    if not overwrite and _finished_chunks(plan.partial_dir):
        names, details = _differences(found, wanted)
        raise ValueError(f"{plan.partial_dir}: holds a partial run with another {', '.join(names)} "
                         f"({'; '.join(details)}); rerun that command to finish it, or pass --overwrite to "
                         "discard it")
    return False


def _differences(found: Mapping[str, Any], wanted: Mapping[str, Any]):
    """(names, details) of what differs between two fingerprints: top-level entries, single
    settings, and the models whose weights changed."""
    names, details = [], []
    for key in sorted(set(found) | set(wanted)):
        was, now = found.get(key), wanted.get(key)
        if was == now:
            continue
        if key == "settings":
            was, now = was or {}, now or {}
            changed = sorted(name for name in set(was) | set(now) if was.get(name) != now.get(name))
            names += changed
            details += [f"{name}={was.get(name)}" for name in changed]
        elif key == "models":
            was, now = was or {}, now or {}
            changed = sorted(flag for flag in set(was) | set(now) if was.get(flag) != now.get(flag))
            names += [f"--{flag}" for flag in changed]
            details += [f"the --{flag} weights it started with differ from these" for flag in changed]
        else:
            names.append(key)
            details.append(f"{key}={was}")
    return names, details


def _open_partial(plan: Plan, wanted: Dict[str, Any], overwrite: bool) -> int:
    """Prepares the sidecar directory (its lock held by the caller); returns the finished chunks."""
    directory = plan.partial_dir
    remove_leftovers(directory)
    if _same_run(plan, wanted, overwrite):
        return _finished_chunks(directory)
    for name in os.listdir(directory):
        if CHUNK_PATTERN.fullmatch(name):
            os.remove(os.path.join(directory, name))
    with atomic_open(os.path.join(directory, FINGERPRINT)) as f:
        json.dump(wanted, f, indent=1, sort_keys=True)
    return 0


def _chunks(dialogues: Iterator[Dialogue], size: int) -> Iterator[List[Dialogue]]:
    while True:
        chunk = list(itertools.islice(dialogues, size))
        if not chunk:
            return
        yield chunk


def augment_file(plan: Plan, make_operations: Callable[[], OperationSet], overwrite: bool = False,
                 make_progress: Optional[Callable[[int, int], Any]] = None) -> Counter:
    """Writes `plan.output_path` (see the module); `make_operations` is called once the input has
    been checked. `make_progress(total, done)` (input dialogues in all, and done by an earlier
    run) gives what is told `advance(n)` after each batch of n more (`core.progress.Progress`). Returns the
    lines written by kind: "original" and each operation name."""
    # An existing output is refused unless a run of this very plan left its chunks: then the run
    # is finished, even when it was killed after writing the output but before removing them.
    check_output(plan.output_path, [plan.input_path], overwrite or os.path.isdir(plan.partial_dir))
    total = scan_input(plan)
    wanted = plan.fingerprint()
    if not _same_run(plan, wanted, overwrite):  # refuses another run's chunks before any model loads
        check_output(plan.output_path, [plan.input_path], overwrite)
    directory = plan.partial_dir
    with directory_lock(directory, "augmentation run"):
        done = _open_partial(plan, wanted, overwrite)
        progress = make_progress(total, min(done * plan.chunk_size, total)) if make_progress is not None else None
        try:
            if done * plan.chunk_size < total:  # chunks left: only then are the models loaded
                _write_chunks(plan, make_operations, done, progress)
        except BaseException:
            if not _finished_chunks(directory):  # e.g. a model refused: nothing to keep for a rerun
                shutil.rmtree(directory)
            raise
        counts = _assemble(directory, plan.output_path)
        _remove_partial(directory)
    return counts


def _write_chunks(plan: Plan, make_operations: Callable[[], OperationSet], done: int, progress) -> None:
    """Augments the input from chunk `done` on, each chunk written atomically into the sidecar."""
    operations = make_operations()
    if tuple(plan.operations) != operations.names:
        raise ValueError(f"the plan names operations {tuple(plan.operations)} but {operations.names} were built")
    on_batch = progress.advance if progress is not None else None
    remaining = itertools.islice(read_dialogues(plan.input_path), done * plan.chunk_size, None)
    for index, chunk in enumerate(_chunks(remaining, plan.chunk_size), start=done):
        lines = augment_chunk(chunk, operations, plan, on_batch)
        with atomic_open(os.path.join(plan.partial_dir, CHUNK.format(index))) as f:
            f.writelines(line + "\n" for line in lines)


def _remove_partial(directory: str) -> None:
    """Removes the sidecar directory, its chunks last first: a kill on the way leaves chunks
    0..k and the fingerprint, which a rerun continues (recomputing the rest) rather than refuses."""
    for index in reversed(range(_finished_chunks(directory))):
        os.remove(os.path.join(directory, CHUNK.format(index)))
    shutil.rmtree(directory)


def _assemble(directory: str, output: str) -> Counter:
    counts: Counter = collections.Counter()
    with atomic_open(output) as out:
        for index in range(_finished_chunks(directory)):
            with open(os.path.join(directory, CHUNK.format(index)), encoding="utf-8") as f:
                for line in f:
                    out.write(line)
                    labels = json.loads(line).get("labels", {})
                    counts["+".join(labels.get(AUGMENTATIONS) or ()) or "original"] += 1
    return counts
