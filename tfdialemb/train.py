r"""Trains a contrastive method on dialogues.

  python -m tfdialemb.train --method=mge|siamese_s|siamese_m --train_file=train.jsonl \
      --model_dir=DIR --init_checkpoint=DIR [--max_steps=N | --num_epochs=N] [--batch_size=20] \
      [--strategy=auto|default|mirrored|multi_worker] [--seed=0] [--turns=3] [--negatives=9] \
      [--aggregation=i2|i1] [--temperature=0.1] [--freeze_layers=6] [--mge_variant=paper|released]

`mge` is DialogueCSE; `siamese_s` / `siamese_m` are its Table 2 baselines SiameseBERT_S / _M
(tfdialemb/methods/siamese.py): --negatives and, for siamese_m, --turns (utterances flattened
into the context) and --temperature (initial 1/scale of the cosine) apply to them too.

`--train_file` is a canonical JSONL (examples are built into DIR/data, seeded) or a directory
built by `python -m tfdialemb.data build`. Every flag defaults to the paper's value; per-dataset
values live in flags/ (`--flagfile=flags/mge_jddc.cfg`). Interrupting (Ctrl-C, SIGTERM) saves a
checkpoint; rerunning the same command resumes from the last one. DIR then loads as a checkpoint
(`--init_checkpoint=DIR`, `python -m tfdialemb.evaluate --model_dir=DIR`).
"""
from absl import app, flags

from tfdialemb.training import cli

FLAGS = flags.FLAGS
METHODS = ("mge", "siamese_s", "siamese_m")
flags.DEFINE_enum("method", None, METHODS, "The method to train.")
flags.DEFINE_integer("turns", 3, "MGE / siamese_m: context utterances (see tfdialemb/methods).")
flags.DEFINE_integer("negatives", 9, "Negatives per response (1/4/9/19 in the paper).")
flags.DEFINE_enum("aggregation", "i2", ["i1", "i2"], "MGE turn aggregation (Eq. 5-6 or 7).")
flags.DEFINE_float("temperature", 0.1, "MGE NT-Xent temperature; siamese_m: initial 1/scale.")
flags.DEFINE_enum("mge_variant", "paper", ["paper", "released"],
                  "released: the public code's ×0.1, Σ(1+α)R̂ over 3+3 turns, loss / candidates.")
cli.define_flags({"batch_size": 20, "learning_rate": 5e-5, "freeze_layers": 6, "max_length": 50})


def main(argv):
    del argv
    from tfdialemb.data.examples import make_builder  # pylint: disable=import-outside-toplevel
    from tfdialemb.methods.mge import MatchingGuidedEmbeddingModel  # pylint: disable=import-outside-toplevel
    from tfdialemb.methods.siamese import SiameseModel  # pylint: disable=import-outside-toplevel

    if FLAGS.method is None:
        print(f"error: missing --method (one of {', '.join(METHODS)})")
        return 2
    if FLAGS.method in ("siamese_s", "siamese_m"):
        variant = "single" if FLAGS.method == "siamese_s" else "multi"
        return cli.run(
            make_builder("siamese", {"negatives": FLAGS.negatives, "context_turns": FLAGS.turns}),
            lambda encoder: SiameseModel(encoder, variant=variant, negatives=FLAGS.negatives,
                                         temperature=FLAGS.temperature))
    builder = make_builder("mge", {"negatives": FLAGS.negatives, "context_before": FLAGS.turns,
                                   "context_after": FLAGS.turns})

    def build_model(encoder):
        return MatchingGuidedEmbeddingModel(
            encoder, turns=FLAGS.turns, negatives=FLAGS.negatives, aggregation=FLAGS.aggregation,
            temperature=FLAGS.temperature, variant=FLAGS.mge_variant)

    return cli.run(builder, build_model)


if __name__ == "__main__":
    app.run(main)
