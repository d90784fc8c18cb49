r"""Writes an augmented dialogue file: each dialogue, then one view per operation of a set.

  python -m tfdialemb.augment --input=dialogues.jsonl --output=augmented.jsonl --set=a-l-m \
      [--views=1] [--seed=0] [--batch_size=32] [--chunk_size=512] --fill_mask_model=DIR \
      [--translation_models=DIR,DIR] [--context_response_model=DIR | --sentence_encoder=DIR] \
      [--overwrite]

The sets are those of the thesis' Table 1 (`tfdialemb.augment.presets`); the models each needs
are checked before any work, and every one missing is named. An interrupted run leaves its
finished chunks in OUTPUT.partial/; the same command continues from them and writes the file an
uninterrupted run writes. Exit status: 0 done, 1 a bad input line, 2 a wrong command.
"""
from typing import Callable

from absl import flags

from tfdialemb.core import options
from tfdialemb.augment import command
from tfdialemb.core.cli import run_command
from tfdialemb.inference.kinds import load

command.define_flags()
flags.adopt_module_key_flags(command)
flags.adopt_module_key_flags(options)


def run(load_model: Callable = load):
    """The command, the similarity model of crop and shuffle opened by `load_model` (a model
    directory opened as an inference kind's runtime)."""
    run_command(lambda argv: command.main(load_model), __name__)


if __name__ == "__main__":
    run()
