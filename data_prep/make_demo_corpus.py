r"""Writes the synthetic demo corpus (`tfdialemb.demo.corpus`) as canonical JSONL.

  python -m data_prep.make_demo_corpus --output=demo.jsonl [--dialogues=2000] [--seed=0]

The output depends only on (number of dialogues, seed); a shorter corpus is a prefix of a longer
one with the same seed.
"""
import collections
import sys
from typing import Iterator

from absl import app, flags

from tfdialemb.core import options
from tfdialemb.core.cli import OVERWRITE, claim_output, parse_flags
from tfdialemb.demo.corpus import DOMAINS, generate
from tfdialemb.dialogue import Dialogue, write_dialogues
from tfdialemb.core.files import check_output

FLAGS = flags.FLAGS


def _count_by_domain(dialogues: Iterator[Dialogue],
                     counts: "collections.Counter[str]") -> Iterator[Dialogue]:
    """Passes `dialogues` through, counting them by domain label into `counts`."""
    for dialogue in dialogues:
        counts[dialogue.labels["domain"]] += 1
        yield dialogue


def main(argv):
    del argv
    counts: "collections.Counter[str]" = collections.Counter()
    try:
        check_output(FLAGS.output, overwrite=FLAGS.overwrite)
        claim_output(FLAGS.output)
        total = write_dialogues(_count_by_domain(generate(FLAGS.dialogues, FLAGS.seed), counts),
                                FLAGS.output)
    except OSError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {total} dialogues to {FLAGS.output}")
    for domain in DOMAINS:
        print(f"  {domain.name}: {counts[domain.name]}")
    return 0


def define_flags() -> None:
    """Defines the CLI flags; only when run as a program, so importing never clashes with them."""
    flags.DEFINE_string("output", None, "Where to write the JSONL corpus.")
    OVERWRITE.define()
    flags.adopt_module_key_flags(options)
    flags.DEFINE_integer("dialogues", 2000, "How many dialogues to generate.", lower_bound=1)
    flags.DEFINE_integer("seed", 0, "Random seed: the same seed writes the same corpus.")
    flags.mark_flag_as_required("output")


def run():
    define_flags()
    app.run(main, flags_parser=parse_flags)


if __name__ == "__main__":
    run()
