r"""Builds a response-selection test set from canonical dialogues: canonical JSONL that names its
blocks, or Ubuntu V1's released layout.

  python -m data_prep.build_selection_set --input=test.jsonl --output=selection_test.jsonl \
      [--candidates=10] [--seed=0] [--pool_size=100000]

For each dialogue of at least two turns, one position k ≥ 1 drawn with the seed: the context
u_1 … u_k-1 and a block of --candidates lines, the true turn u_k first (label 1) and then
distinct utterances drawn from other dialogues, none with the true turn's text (label 0: a copy
of the positive would tie with it), as Ubuntu V1's test blocks are laid out
(`label \t u_1 \t … \t u_k-1 \t response`, one line per candidate; see
tfdialemb/converters/response_selection.py). An --output ending in .jsonl gets the records the
`ubuntu` / `douban` converters write (the context's turns with their speakers, the candidate
last; labels {"label", "context_id"}), so `python -m tfdialemb.evaluate --task=response_selection`
reads its blocks from the file whatever --candidates was; any other name gets the released text
layout, which records no block size: evaluate it with --block_size equal to --candidates. Tabs and
line breaks inside a text become spaces.
Negatives come from a reservoir of at most --pool_size utterances of the file
(tfdialemb.data.sampling.UtterancePool), so memory is bounded however large the file.

The output is written atomically. Exit status: 0 done; 1 a bad input line; 2 a missing input, a
bad flag value or nothing to build.
"""
import re
from typing import Dict

import numpy as np
from absl import app, flags

from data_prep.set_flags import define_input_output

from data_prep.build_stp_set import utterance_pool
from tfdialemb.core.cli import claim_output, parse_flags, report_error
from tfdialemb.core.progress import Progress
from tfdialemb.dialogue import Dialogue, Turn, read_dialogues
from tfdialemb.core.files import atomic_open, check_output

FLAGS = flags.FLAGS
_BREAKS = re.compile(r"[\t\r\n]+")


def flat(text: str) -> str:
    """`text` on one line without tabs, as a field of the released layout."""
    return _BREAKS.sub(" ", text).strip()


def build_selection_set(input_path: str, output_path: str, candidates: int = 10, seed: int = 0,
                        pool_size: int = 100_000) -> Dict[str, int]:
    """Writes the set (module docstring; JSONL when `output_path` ends in .jsonl) and returns counts
    {dialogues, blocks, lines}."""
    if candidates < 2:
        raise ValueError(f"candidates must be at least 2 (the true turn and a negative), got {candidates}")
    pool = utterance_pool(input_path, pool_size, seed, form=flat)
    rng = np.random.default_rng(seed)
    jsonl = output_path.endswith(".jsonl")
    counts = {"dialogues": 0, "blocks": 0, "lines": 0}
    progress = Progress(None, "dialogues")
    with atomic_open(output_path) as f:
        for index, dialogue in enumerate(read_dialogues(input_path)):
            counts["dialogues"] += 1
            progress.advance(1)
            texts = [flat(turn.text) for turn in dialogue.turns]
            if len(texts) < 2:
                continue
            k = int(rng.integers(1, len(texts)))
            negatives = pool.sample(rng, candidates - 1, exclude_dialogue=index, exclude_texts=(texts[k],))
            for number, (label, response) in enumerate([(1, texts[k])] + [(0, n) for n in negatives]):
                if jsonl:
                    turns = [Turn(turn.speaker, text) for turn, text in zip(dialogue.turns, texts[:k])]
                    f.write(Dialogue(f"{dialogue.id}-{number}", turns + [Turn(dialogue.turns[k].speaker, response)],
                                     {"label": label, "context_id": counts["blocks"]}).to_line() + "\n")
                else:
                    f.write("\t".join([str(label)] + texts[:k] + [response]) + "\n")
                counts["lines"] += 1
            counts["blocks"] += 1
        progress.finish()
        if not counts["blocks"]:
            raise ValueError(f"{input_path}: no dialogue has two turns")
    return counts


def main(argv):
    del argv
    try:
        check_output(FLAGS.output, [FLAGS.input], FLAGS.overwrite)
        claim_output(FLAGS.output)
        counts = build_selection_set(FLAGS.input, FLAGS.output, FLAGS.candidates, FLAGS.seed, FLAGS.pool_size)
    except (OSError, ValueError) as e:
        return report_error(e)
    print(f"wrote {counts['blocks']} blocks of {FLAGS.candidates} candidates ({counts['lines']} lines) from "
          f"{counts['dialogues']} dialogues to {FLAGS.output}"
          + ("" if FLAGS.output.endswith(".jsonl") else f" (released layout: evaluate with --block_size="
                                                        f"{FLAGS.candidates})"))
    return 0


def define_flags() -> None:
    """Defines the CLI flags; only when run as a program, so importing never clashes with them."""
    define_input_output("Canonical dialogue JSONL (e.g. the test split).",
                        "Where to write the set: NAME.jsonl, canonical records naming their blocks; any "
                        "other name, Ubuntu V1's text layout.")
    flags.DEFINE_integer("candidates", 10, "Candidates per block: the true turn and negatives.", lower_bound=2)
    flags.DEFINE_integer("seed", 0, "Seed of the positions and the negatives.")
    flags.DEFINE_integer("pool_size", 100_000, "Reservoir capacity of the utterance pool.", lower_bound=1)


def run():
    define_flags()
    app.run(main, flags_parser=parse_flags)


if __name__ == "__main__":
    run()
