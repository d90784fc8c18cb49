"""Peak resident memory of `python -m tfdialemb.data build`, per example builder, on generated
dialogues of chit-chat length at growing corpus sizes: a build streams when its peak stays flat.

Each build runs in a fresh process (`processes.peak_mib`), so a peak is that build's alone.
The corpus is `demo_data.chitchat_dialogues`: sessions of 45 turns, as long as real chit-chat;
or, with `corpus`, the first N dialogues of a canonical JSONL (the file read again from its start
as often as N needs), so a corpus of long real conversations, whose longest turns set the
tokenizer's working memory, is measured as it is. The augcl builder reads an augmented file: every
session followed by `views` contiguous spans of it, written as `python -m tfdialemb.augment` writes
its views.
"""
import dataclasses
import itertools
import os
import shutil
import sys
import tempfile
from typing import Dict, Iterator, List, Optional, Sequence

from tfdialemb.augment.augmented_file import original, view_id
from tfdialemb.augment.base import augmented
from tfdialemb.bench.demo_data import CHITCHAT_TURNS, chitchat_dialogues
from tfdialemb.bench.processes import peak_mib
from tfdialemb.dialogue import Dialogue, read_dialogues, write_dialogues

SIZES = (250, 1000, 4000)
VIEWS = 2
MAX_LENGTH = 128
DIALOGUE_MAX_LENGTH = {"dial2vec": 256, "augcl": 256}
"""Builders whose examples are whole dialogues get a longer max_length, as their methods use."""
SPAN = "span"
"""The operation the views are labelled with: a contiguous span of the original's turns."""
AUGMENTED_INPUT = ("augcl",)
"""Builders that read an augmented file (originals followed by their views)."""


def with_views(dialogues: Iterator[Dialogue], views: int = VIEWS) -> Iterator[Dialogue]:
    """Each dialogue followed by `views` views: its turns from position v + 1 to v + 1 from the end
    (none for a dialogue of 2·views turns or fewer, which has no such span)."""
    for dialogue in dialogues:
        yield original(dialogue)
        if len(dialogue.turns) <= 2 * views:
            continue
        for view in range(1, views + 1):
            span = augmented(dialogue, dialogue.turns[view:len(dialogue.turns) - view], SPAN)
            yield dataclasses.replace(span, id=view_id(dialogue.id, SPAN, view, views))


def corpus_prefix(path: str, count: int) -> Iterator[Dialogue]:
    """The first `count` dialogues of the file at `path`, read from its start again as often as
    needed, each id prefixed with its pass ("0/a", "1/a", ...: the file's ids are distinct, so
    these are), no line read beyond the last one taken."""
    return itertools.islice(_passes(path), count)


def _passes(path: str) -> Iterator[Dialogue]:
    for number in itertools.count():
        empty = True
        for dialogue in read_dialogues(path):
            empty = False
            yield dataclasses.replace(dialogue, id=f"{number}/{dialogue.id}")
        if empty:
            raise ValueError(f"{path}: holds no dialogues")


def build_argv(method: str, corpus: str, output_dir: str, checkpoint: str) -> List[str]:
    return [sys.executable, "-m", "tfdialemb.data", "build", f"--method={method}", f"--input={corpus}",
            f"--output_dir={output_dir}", f"--init_checkpoint={checkpoint}",
            f"--max_length={DIALOGUE_MAX_LENGTH.get(method, MAX_LENGTH)}"]


def bench_build_memory(checkpoint: str, methods: Sequence[str], sizes: Sequence[int] = SIZES,
                       turns: int = CHITCHAT_TURNS, threads: int = 1, corpus: Optional[str] = None) -> Dict:
    """Peak resident MiB of building each of `sizes` dialogues with each builder of `methods`, of
    generated chit-chat or of `corpus`'s first dialogues."""
    peaks: Dict[str, Dict[str, float]] = {method: {} for method in methods}

    def dialogues(size):
        return corpus_prefix(corpus, size) if corpus else chitchat_dialogues(size, turns)

    with tempfile.TemporaryDirectory() as directory:
        for size in sizes:
            plain = os.path.join(directory, f"corpus-{size}.jsonl")
            write_dialogues(dialogues(size), plain)
            views = os.path.join(directory, f"corpus-{size}-views.jsonl")
            if set(methods) & set(AUGMENTED_INPUT):
                write_dialogues(with_views(dialogues(size)), views)
            for method in methods:
                built = views if method in AUGMENTED_INPUT else plain
                output = os.path.join(directory, f"built-{method}-{size}")
                peaks[method][str(size)] = peak_mib(build_argv(method, built, output, checkpoint), threads)
                shutil.rmtree(output)
    return {"checkpoint": checkpoint, "corpus": corpus, "turns": None if corpus else turns, "sizes": list(sizes),
            "views": VIEWS,
            "max_length": {method: DIALOGUE_MAX_LENGTH.get(method, MAX_LENGTH) for method in methods},
            "peak_mib": peaks,
            "growth": {method: by_size[str(sizes[-1])] / by_size[str(sizes[0])] for method, by_size in peaks.items()}}


def format_report(report: Dict) -> str:
    sizes = report["sizes"]
    header = "".join(f"{size:>10,}" for size in sizes)
    source = report.get("corpus") or f"generated dialogues of {report['turns']} turns"
    lines = [f"peak resident MiB of `data build` on {source} ({report['checkpoint']})",
             f"  {'builder':<12}{'max_len':>8}{header}   {sizes[-1]:,} / {sizes[0]:,}"]
    for method, by_size in report["peak_mib"].items():
        cells = "".join(f"{by_size[str(size)]:>10.0f}" for size in sizes)
        lines.append(f"  {method:<12}{report['max_length'][method]:>8}{cells}   {report['growth'][method]:.2f}x")
    return "\n".join(lines)
