r"""Trains a method on dialogues.

  python -m tfdialemb.train --method=mge --train_file=train.jsonl --model_dir=DIR \
      --init_checkpoint=DIR [--max_steps=N | --num_epochs=N] [--batch_size=20] \
      [--strategy=auto|default|mirrored|multi_worker] [--seed=0] [--turns=3] [--negatives=9] \
      [--aggregation=i2|i1] [--temperature=0.1] [--freeze_layers=6] [--mge_variant=paper|released]

`--train_file` is a canonical JSONL (examples are built into DIR/data, seeded) or a directory
built by `python -m tfdialemb.data build`. Every flag defaults to the paper's value; dataset
flagfiles live in flags/ (e.g. --flagfile=flags/mge.cfg). Interrupting (Ctrl-C, SIGTERM) saves a
checkpoint; rerunning the same command resumes from the last one. DIR loads as a checkpoint
(`--init_checkpoint=DIR`, `python -m tfdialemb.evaluate --model_dir=DIR`).
"""
import math
import os
import sys

from absl import app, flags

from tfdialemb import distribute

FLAGS = flags.FLAGS
METHODS = ("mge",)
flags.DEFINE_enum("method", None, METHODS, "The method to train.")
flags.DEFINE_string("train_file", None, "Canonical dialogue JSONL, or a built shard directory.")
flags.DEFINE_string("model_dir", None, "Where checkpoints, TensorBoard logs and the built data go.")
flags.DEFINE_string("init_checkpoint", None, "Encoder to start from (any checkpoint kind).")
flags.DEFINE_integer("max_steps", None, "Training steps (or give --num_epochs).")
flags.DEFINE_float("num_epochs", None, "Passes over the built examples (or give --max_steps).")
flags.DEFINE_integer("batch_size", 20, "Global batch size (DialogueCSE: 20).")
flags.DEFINE_float("learning_rate", 5e-5, "Peak learning rate (DialogueCSE contrastive stage: 5e-5).")
flags.DEFINE_enum("lr_schedule", "constant", ["constant", "linear"], "Decay after warm-up.")
flags.DEFINE_float("warmup_fraction", 0.0, "Fraction of steps with linear warm-up.")
flags.DEFINE_float("weight_decay", 0.0, "Decoupled weight decay.")
flags.DEFINE_integer("freeze_layers", 6, "Freeze the embeddings and this many bottom layers (0: none).")
flags.DEFINE_integer("max_length", 50, "Tokens per utterance (DialogueCSE: 100 JDDC, 50 MDC/ECD).")
flags.DEFINE_integer("seed", 0, "Seed for data building, shuffling and initialisation.")
flags.DEFINE_integer("checkpoint_every", 200, "Save a checkpoint every N steps.")
flags.DEFINE_integer("log_every", 50, "Log scalars every N steps.")
flags.DEFINE_integer("num_shards", 4, "Shards when building --train_file (>= number of workers).")
flags.DEFINE_integer("turns", 3, "MGE: context utterances (see tfdialemb/methods/mge.py).")
flags.DEFINE_integer("negatives", 9, "MGE: negatives per response (1/4/9/19 in the paper).")
flags.DEFINE_enum("aggregation", "i2", ["i1", "i2"], "MGE turn aggregation (Eq. 5-6 or 7).")
flags.DEFINE_float("temperature", 0.1, "MGE NT-Xent temperature.")
flags.DEFINE_enum("mge_variant", "paper", ["paper", "released"],
                  "released: the public code's ×0.1, Σ(1+α)R̂ over 3+3 turns, loss / candidates.")
distribute.define_flags()


def _builder_and_model():
    """The example builder and model factory of --method, from the flags."""
    from tfdialemb.data.examples import make_builder  # pylint: disable=import-outside-toplevel
    from tfdialemb.methods.mge import MatchingGuidedEmbeddingModel  # pylint: disable=import-outside-toplevel

    builder = make_builder("mge", {"negatives": FLAGS.negatives, "context_before": FLAGS.turns,
                                   "context_after": FLAGS.turns})

    def model(encoder):
        return MatchingGuidedEmbeddingModel(
            encoder, turns=FLAGS.turns, negatives=FLAGS.negatives, aggregation=FLAGS.aggregation,
            temperature=FLAGS.temperature, variant=FLAGS.mge_variant)

    return builder, model


def main(argv):
    del argv
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    from tfdialemb.data.build import BuildOptions  # pylint: disable=import-outside-toplevel
    from tfdialemb.data.pipeline import make_dataset  # pylint: disable=import-outside-toplevel
    from tfdialemb.dialogue import DialogueFormatError, ErrorPolicy  # pylint: disable=import-outside-toplevel
    from tfdialemb.encoders import load_pretrained  # pylint: disable=import-outside-toplevel
    from tfdialemb.training import data  # pylint: disable=import-outside-toplevel
    from tfdialemb.training.loop import LoopConfig, TrainingLoop  # pylint: disable=import-outside-toplevel
    from tfdialemb.training.optimizer import OptimizerConfig  # pylint: disable=import-outside-toplevel

    missing = [f"--{n}" for n in ("method", "train_file", "model_dir", "init_checkpoint")
               if not getattr(FLAGS, n)]
    if missing or (FLAGS.max_steps is None) == (FLAGS.num_epochs is None):
        print(f"error: missing {', '.join(missing) or 'exactly one of --max_steps / --num_epochs'}",
              file=sys.stderr)
        return 2
    try:
        strategy = distribute.make_strategy(FLAGS.strategy, FLAGS.devices)
        tokenizer = load_pretrained(FLAGS.init_checkpoint).tokenizer
        builder, build_model = _builder_and_model()
        chief = distribute.is_chief(strategy)
        data_dir = os.path.join(FLAGS.model_dir, "data" if chief else
                                f".data-worker-{strategy.cluster_resolver.task_id}")
        options = BuildOptions(max_length=FLAGS.max_length, seed=FLAGS.seed, num_shards=FLAGS.num_shards)
        manifest = data.prepare(FLAGS.train_file, data_dir, builder, tokenizer, options, ErrorPolicy("fail"))
    except DialogueFormatError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    max_steps = FLAGS.max_steps or math.ceil(
        FLAGS.num_epochs * manifest["counts"]["examples"] / FLAGS.batch_size)

    def build_method():
        tf.keras.utils.set_random_seed(FLAGS.seed)
        encoder = load_pretrained(FLAGS.init_checkpoint).encoder
        layers = encoder.encoder_config.num_layers
        if FLAGS.freeze_layers >= layers:
            raise ValueError(f"--freeze_layers={FLAGS.freeze_layers} would freeze all {layers} layers "
                             f"of {FLAGS.init_checkpoint}; freeze fewer")
        encoder.freeze_bottom(FLAGS.freeze_layers)
        return build_model(encoder)

    def dataset_fn(context):
        return make_dataset(manifest["directory"], FLAGS.batch_size, training=True, input_context=context,
                            seed=FLAGS.seed, repeat=True)

    config = LoopConfig(
        model_dir=FLAGS.model_dir, max_steps=max_steps, global_batch_size=FLAGS.batch_size,
        optimizer=OptimizerConfig(learning_rate=FLAGS.learning_rate, schedule=FLAGS.lr_schedule,
                                  warmup_steps=int(FLAGS.warmup_fraction * max_steps),
                                  weight_decay=FLAGS.weight_decay),
        checkpoint_every=FLAGS.checkpoint_every, log_every=FLAGS.log_every, seed=FLAGS.seed)
    try:
        loop = TrainingLoop(strategy, build_method, dataset_fn, tokenizer, config)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    scalars = loop.run()
    print("trained to step {step:.0f}: ".format(**scalars)
          + ", ".join(f"{k} {v:.4f}" for k, v in scalars.items() if k != "step"))
    return 0


if __name__ == "__main__":
    app.run(main)
