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
from absl import app, flags

from tfdialemb.augment import flags as augment_flags
from tfdialemb.augment.presets import PRESETS
from tfdialemb.cli import OVERWRITE, parse_flags

FLAGS = flags.FLAGS
flags.DEFINE_string("input", None, "Canonical dialogue JSONL to augment.")
flags.DEFINE_string("output", None, "Where to write the originals and their augmentations (JSONL).")
flags.DEFINE_enum("set", None, list(PRESETS), "Augmentation set (thesis Table 1).")
flags.DEFINE_integer("views", 1, "Augmented views per operation and dialogue, each drawn afresh.", lower_bound=1)
flags.DEFINE_integer("seed", 0, "Seed of every random draw (per dialogue, operation and view).")
flags.DEFINE_integer("batch_size", 32, "Dialogues augmented together.", lower_bound=1)
flags.DEFINE_integer("chunk_size", 512, "Dialogues per finished piece an interrupted run keeps.", lower_bound=1)
augment_flags.define_flags()
OVERWRITE.define()
flags.mark_flags_as_required(["input", "output", "set"])


def main(argv):
    del argv
    from tfdialemb.augment.augmented_file import Plan, augment_file  # pylint: disable=import-outside-toplevel
    from tfdialemb.augment.operations import build_operations, check_models  # pylint: disable=import-outside-toplevel
    from tfdialemb.augment.presets import get_preset  # pylint: disable=import-outside-toplevel
    from tfdialemb.cli import Progress, report_error  # pylint: disable=import-outside-toplevel

    given = augment_flags.values()
    try:
        preset = get_preset(FLAGS.set)
        models = augment_flags.model_paths(given)
        check_models(preset, models)
        plan = Plan(FLAGS.input, FLAGS.output, preset.operations, views=FLAGS.views, seed=FLAGS.seed,
                    batch_size=FLAGS.batch_size, chunk_size=FLAGS.chunk_size,
                    settings={"set": preset.name, **given})
        counts = augment_file(
            plan, lambda: build_operations(preset, models, FLAGS.seed, augment_flags.operation_settings(given),
                                           augment_flags.similarity_settings(given)),
            FLAGS.overwrite, lambda total: Progress(total, "dialogues"))
    except (OSError, ValueError) as e:
        return report_error(e)
    views = ", ".join(f"{counts[name]} {name}" for name in preset.operations)
    print(f"wrote {sum(counts.values())} dialogues to {FLAGS.output}: {counts['original']} originals, {views}")
    return 0


def run():
    app.run(main, flags_parser=parse_flags)


if __name__ == "__main__":
    run()
