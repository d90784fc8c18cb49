"""What every training command shares: its flags and the run from flags to checkpoints.

`python -m tfdialemb.train` (contrastive methods) and `python -m tfdialemb.pretrain` (continued
MLM) differ only in the example builder, the model built on the encoder and an optional batch
transform (masking); everything else — data preparation, strategy, freezing, optimizer, resume —
is here once.
"""
import math
import os
import sys
from typing import Callable, Mapping, Optional

from absl import flags

from tfdialemb import distribute

FLAGS = flags.FLAGS


def define_flags(defaults: Mapping[str, object]) -> None:
    """The shared flags; `defaults` sets the paper's values for one command."""
    flags.DEFINE_string("train_file", None, "Canonical dialogue JSONL, or a built shard directory.")
    flags.DEFINE_string("model_dir", None, "Checkpoints, TensorBoard logs and the built data go here.")
    flags.DEFINE_string("init_checkpoint", None, "Encoder to start from (any checkpoint kind).")
    flags.DEFINE_integer("max_steps", None, "Training steps (or give --num_epochs).")
    flags.DEFINE_float("num_epochs", defaults.get("num_epochs"), "Passes over the built examples.")
    flags.DEFINE_integer("batch_size", defaults["batch_size"], "Global batch size.")
    flags.DEFINE_float("learning_rate", defaults["learning_rate"], "Peak learning rate.")
    flags.DEFINE_enum("lr_schedule", "constant", ["constant", "linear"], "Decay after warm-up.")
    flags.DEFINE_float("warmup_fraction", 0.0, "Fraction of the steps with linear warm-up.")
    flags.DEFINE_float("weight_decay", 0.0, "Decoupled weight decay (not on biases and norms).")
    flags.DEFINE_integer("freeze_layers", defaults["freeze_layers"],
                         "Freeze the embeddings and this many bottom layers (0: none).")
    flags.DEFINE_integer("max_length", defaults["max_length"], "Tokens per sequence.")
    flags.DEFINE_integer("seed", 0, "Seed for data building, shuffling and initialisation.")
    flags.DEFINE_integer("checkpoint_every", 200, "Save a checkpoint every N steps.")
    flags.DEFINE_integer("log_every", 50, "Log scalars every N steps.")
    flags.DEFINE_integer("num_shards", 4, "Shards when building --train_file (>= number of workers).")
    flags.DEFINE_enum("validate_task", "sr", ["sr", "dsts", "dialogue"],
                      "Validation task (with --validate_file); dialogue: dial2vec's metrics of the "
                      "interlocutor-pooled embedding, labels[--validate_label_key] the domain.")
    flags.DEFINE_string("validate_label_key", "domain", "Label key of --validate_task=dialogue.")
    flags.DEFINE_string("validate_file", None, "Evaluation set scored every --validate_every steps.")
    flags.DEFINE_integer("validate_every", 0, "Validation interval in steps (0: never).")
    distribute.define_flags()


def run(builder, build_model: Callable, transform: Optional[Callable] = None,
        after_build: Optional[Callable] = None,
        encoder_options: Optional[Mapping[str, object]] = None,
        auxiliary: Optional[Callable] = None,
        build_options: Optional[Mapping[str, object]] = None) -> int:
    """Trains `build_model(encoder)` on `builder`'s examples of --train_file; the exit status.

    `transform(dataset, tokenizer)` rewrites the per-replica batches (e.g. masking);
    `after_build(model)` runs once the model exists (e.g. loading a pre-training head);
    `encoder_options` go to `load_pretrained` (e.g. PLATO-style role / turn embedding sizes);
    `auxiliary(input_context, tokenizer)` returns an infinite, per-replica-batched dataset of
    dicts (e.g. CCL's NLI pairs) whose keys are merged into each main batch (see
    `merge_auxiliary`); `build_options` set further `BuildOptions` fields (e.g. the dialogue
    separator).
    """
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    from tfdialemb.data.build import BuildOptions  # pylint: disable=import-outside-toplevel
    from tfdialemb.data.pipeline import make_dataset  # pylint: disable=import-outside-toplevel
    from tfdialemb.cli import report_error  # pylint: disable=import-outside-toplevel
    from tfdialemb.dialogue import ErrorPolicy  # pylint: disable=import-outside-toplevel
    from tfdialemb.encoders import load_pretrained, load_tokenizer  # pylint: disable=import-outside-toplevel
    from tfdialemb.training import data  # pylint: disable=import-outside-toplevel
    from tfdialemb.training.loop import LoopConfig, TrainingLoop  # pylint: disable=import-outside-toplevel
    from tfdialemb.training.optimizer import OptimizerConfig  # pylint: disable=import-outside-toplevel

    missing = [f"--{n}" for n in ("train_file", "model_dir", "init_checkpoint") if not getattr(FLAGS, n)]
    if missing:
        print(f"error: missing {', '.join(missing)}", file=sys.stderr)
        return 2
    if not FLAGS.max_steps and not FLAGS.num_epochs:
        print("error: give --max_steps or --num_epochs", file=sys.stderr)
        return 2
    try:
        strategy = distribute.make_strategy(FLAGS.strategy, FLAGS.devices)
        tokenizer = load_tokenizer(FLAGS.init_checkpoint)
        data_dir = os.path.join(FLAGS.model_dir, "data" if distribute.is_chief(strategy) else
                                f".data-worker-{strategy.cluster_resolver.task_id}")
        options = BuildOptions(max_length=FLAGS.max_length, seed=FLAGS.seed, num_shards=FLAGS.num_shards,
                               **(build_options or {}))
        manifest = data.prepare(FLAGS.train_file, data_dir, builder, tokenizer, options, ErrorPolicy("fail"))
    except (OSError, ValueError) as e:
        return report_error(e)
    max_steps = FLAGS.max_steps or max(1, math.ceil(
        FLAGS.num_epochs * manifest["counts"]["examples"] / FLAGS.batch_size))

    def build_method():
        tf.keras.utils.set_random_seed(FLAGS.seed)
        encoder = load_pretrained(FLAGS.init_checkpoint, **(encoder_options or {})).encoder
        layers = encoder.encoder_config.num_layers
        if FLAGS.freeze_layers >= layers:
            raise ValueError(f"--freeze_layers={FLAGS.freeze_layers} would freeze all {layers} layers "
                             f"of {FLAGS.init_checkpoint}; freeze fewer")
        encoder.freeze_bottom(FLAGS.freeze_layers)
        model = build_model(encoder)
        if after_build is not None:
            after_build(model)
        return model

    def dataset_fn(context):
        dataset = make_dataset(manifest["directory"], FLAGS.batch_size, training=True, input_context=context,
                               seed=FLAGS.seed, repeat=True)
        dataset = transform(dataset, tokenizer) if transform else dataset
        return merge_auxiliary(dataset, auxiliary(context, tokenizer)) if auxiliary else dataset

    validate = None
    if FLAGS.validate_file and FLAGS.validate_every:
        if not os.path.isfile(FLAGS.validate_file):
            print(f"error: {FLAGS.validate_file}: validation file does not exist", file=sys.stderr)
            return 2
        try:
            validate = _validation(FLAGS.validate_task, FLAGS.validate_file, tokenizer,
                                   manifest.get("dialogue_separator", "[SEP]"))
        except (OSError, ValueError) as e:
            return report_error(e)

    config = LoopConfig(
        model_dir=FLAGS.model_dir, max_steps=max_steps,
        optimizer=OptimizerConfig(learning_rate=FLAGS.learning_rate, schedule=FLAGS.lr_schedule,
                                  warmup_steps=int(FLAGS.warmup_fraction * max_steps),
                                  weight_decay=FLAGS.weight_decay),
        checkpoint_every=FLAGS.checkpoint_every, log_every=FLAGS.log_every,
        validate_every=FLAGS.validate_every)
    try:
        loop = TrainingLoop(strategy, build_method, dataset_fn, tokenizer, config, validate)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    scalars = loop.run()
    print(f"trained to step {scalars['step']:.0f} of {max_steps}: "
          + ", ".join(f"{k} {v:.4f}" for k, v in scalars.items() if k != "step"))
    return 0


def merge_auxiliary(dataset, auxiliary_dataset):
    """Each batch of `dataset` with the keys of the next `auxiliary_dataset` batch added.

    Merged inside the per-pipeline dataset, before the loop skips the batches a resumed run has
    consumed, so both streams resume exactly where they stopped.
    """
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    shared = sorted(set(dataset.element_spec) & set(auxiliary_dataset.element_spec))
    if shared:
        raise ValueError(f"the auxiliary batches reuse the keys {shared} of the main batches")
    return tf.data.Dataset.zip((dataset, auxiliary_dataset)).map(lambda main, extra: {**main, **extra})


def _validation(task: str, eval_file: str, tokenizer, separator: str) -> Callable:
    """A validation hook: `task` on `eval_file` with the method's current encoder: sentence tasks
    with mean pooling, the dialogue task with the dialogues packed as the build packed them
    (`separator`) and the method's own role / turn inputs."""
    # pylint: disable=import-outside-toplevel
    from tfdialemb.dialogue_embedder import DialogueEmbedder
    from tfdialemb.embedder import SentenceEmbedder
    from tfdialemb.eval.dialogue_embedding import evaluate_dialogue_embeddings, read_labelled_dialogues
    from tfdialemb.eval.tasks import TASKS

    if task == "dialogue":
        read_labelled_dialogues(eval_file, FLAGS.validate_label_key)  # fails now, not after training
    embedders = {}

    def make_embedder(method):
        if task != "dialogue":
            return SentenceEmbedder(method.encoder, tokenizer, pooling="mean", max_length=FLAGS.max_length)
        return DialogueEmbedder(method.encoder, tokenizer, max_length=FLAGS.max_length, separator=separator,
                                role_turn_embeddings=getattr(method, "role_turn_embeddings", False),
                                num_roles=getattr(method, "num_roles", 2))

    def validate(method, step):
        del step
        # One embedder per encoder, so its graph is traced once, not at every validation.
        if id(method.encoder) not in embedders:
            embedders[id(method.encoder)] = make_embedder(method)
        embedder = embedders[id(method.encoder)]
        if task != "dialogue":
            return TASKS[task](eval_file, embedder.embed)
        report = evaluate_dialogue_embeddings(
            eval_file, FLAGS.validate_label_key,
            lambda dialogues: {"interlocutor": embedder.embed(dialogues)["interlocutor"]}, runs=3)
        return report["views"]["interlocutor"]

    return validate
