"""What every training command shares: its flags and the run from flags to checkpoints.

`python -m tfdialemb.train` and `python -m tfdialemb.pretrain` differ only in the methods they
offer (`MethodSpec.command`); the run itself — data preparation, strategy, freezing, optimizer,
resume, the model directory's `method.json` — is here once, and everything method-specific comes
from the method's spec (`tfdialemb.methods.spec`).
"""
import contextlib
import dataclasses
import math
import os
import shutil
import sys
from typing import Any, Callable, Dict, List, Optional, Tuple

from absl import flags

from tfdialemb import distribute, options, precision
from tfdialemb.cli import Progress, report_error, report_removed
from tfdialemb.data.examples import make_builder
from tfdialemb.data.records import describe_cuts
from tfdialemb.dialogue import ErrorPolicy, check_input_file
from tfdialemb.encoders.config import usable_max_length
from tfdialemb.eval.evaluator import OptionValues, get_evaluator, validation_tasks
from tfdialemb.files import LOCK_FILE, check_writable, directory_lock, lock_holder, remove_leftovers
from tfdialemb.inference.kinds import load, runtime_class
from tfdialemb.inference_settings import MAX_LENGTH, MERGE_TURNS, MIN_TURNS, POOL_DIALOGUES
from tfdialemb.kind_registry import KINDS, resolve
from tfdialemb.method_record import (
    check_method_config,
    method_config,
    recorded_settings,
    setting_differences,
    write_method_config,
)
from tfdialemb.methods.spec import TrainingRun, all_specs, get_method
from tfdialemb.options import define_all
from tfdialemb.training.graph_options import apply_training_graph_options

FLAGS = flags.FLAGS
SELECTOR = {"train": "method", "pretrain": "objective"}
"""The flag that names the spec, per command."""
SELECTOR_DEFAULTS = {"train": None, "pretrain": "mlm"}
"""`train` needs --method; `pretrain` defaults to DialogueCSE's continued MLM pre-training, what
`bash run_pretrain.sh jddc` runs."""
TRAINING_DEFAULTS = {"batch_size": 32, "learning_rate": 5e-5, "freeze_layers": 0, "max_length": 128,
                     "num_epochs": None, "weight_decay": 0.0, "warmup_fraction": 0.0,
                     "lr_schedule": "constant"}
"""Values of the shared flags a method's `defaults` leaves unset."""
OPTIMIZER_FLAGS = {"learning_rate": "learning_rate", "lr_schedule": "schedule", "warmup_fraction": "warmup_steps",
                   "weight_decay": "weight_decay"}
"""The shared flags that set an OptimizerConfig field, which a method's `optimizer_settings` may fix;
given with another value than the fixed one, they are refused."""


def define_flags(command: str) -> None:
    """The shared flags, the method selector and every option of the command's methods."""
    specs = all_specs(command)
    names = [spec.name for spec in specs]
    flags.DEFINE_enum(SELECTOR[command], SELECTOR_DEFAULTS[command], names,
                      "What to train; its paper's values fill every flag left unset (docs/methods/overview.md).")
    flags.DEFINE_string("train_file", None, "Canonical dialogue JSONL, or a built shard directory.")
    flags.DEFINE_string("model_dir", None, "Checkpoints, method.json, TensorBoard logs and the built data.")
    flags.DEFINE_string("init_checkpoint", None, "Encoder to start from (any checkpoint kind).")
    flags.DEFINE_integer("max_steps", None, "Training steps (or give --num_epochs).", lower_bound=1)
    flags.DEFINE_float("num_epochs", None, "Passes over the built examples, each in a fresh order and cut into "
                      "full batches (the last partial batch of a pass is dropped, as the papers drop it).")
    flags.register_validator("num_epochs", lambda value: value is None or value > 0,
                             message="--num_epochs must be positive")
    flags.DEFINE_integer("batch_size", None, "Global batch size (default: the method's).", lower_bound=1)
    flags.DEFINE_float("learning_rate", None, "Peak learning rate (default: the method's).",
                       lower_bound=0.0)
    flags.DEFINE_enum("lr_schedule", None, ["constant", "linear"], "Decay after warm-up "
                      "(default: the method's).")
    flags.DEFINE_float("warmup_fraction", None, "Fraction of the steps with linear warm-up (0 to 1).",
                       lower_bound=0.0, upper_bound=1.0)
    flags.DEFINE_float("weight_decay", None, "Decoupled weight decay (not on biases and norms).",
                       lower_bound=0.0)
    flags.DEFINE_integer("freeze_layers", None, "Freeze the embeddings and this many bottom layers "
                         "(0: none; negative: all but the top -N layers, e.g. -3 trains only the "
                         "last 3 whatever the depth; default: the method's, fitted to the encoder's "
                         "depth when it would leave no layer to train).")
    MAX_LENGTH.define("Tokens per built sequence, special tokens included (default: the method's).")
    MERGE_TURNS.define()
    MIN_TURNS.define()
    POOL_DIALOGUES.define()
    flags.DEFINE_integer("seed", 0, "Seed for data building, shuffling and initialisation.")
    flags.DEFINE_integer("checkpoint_every", 200, "Save a checkpoint every N steps.", lower_bound=1)
    flags.DEFINE_integer("log_every", 50, "Print the step's loss and metrics, and write them to "
                         "TensorBoard (MODEL_DIR/train), every N steps.", lower_bound=1)
    flags.DEFINE_integer("num_shards", 4, "Shards when building --train_file (>= number of workers).",
                         lower_bound=1)
    flags.DEFINE_boolean("bucket_by_length", False, "Batch examples of similar length together: less padding, "
                         "but the in-batch negatives are then of the example's own length class, not the "
                         "papers' uniform sample of the corpus (default: uniform batches, as the papers draw).")
    flags.DEFINE_enum("validate_task", "sr", validation_tasks(),
                      "Validation task (with --validate_file), an evaluator of `evaluate` (its primary metric "
                      "keeps the best weights); dialogue: dial2vec's metrics of the "
                      "dialogue embedding the method serves, labels[--validate_label_key] the domain; "
                      "probes: the augmentation thesis' domain probes of that embedding (logistic regression "
                      "accuracy, KMeans purity, nDCG@100), a seeded quarter of the file held out; "
                      "sequence_modeling: triple-encoders' average rank of the next utterance; "
                      "context_response: a context-response model's in-batch accuracy@5 over batches of "
                      "--batch_size pairs, one per dialogue. The weights that validate best (sr: MAP, "
                      "dsts: Spearman, dialogue: purity, sequence_modeling: the lowest average rank, "
                      "context_response: accuracy@5) are kept in MODEL_DIR/best.")
    flags.DEFINE_string("validate_label_key", "domain", "Label key of --validate_task=dialogue.")
    flags.DEFINE_string("validate_file", None, "Evaluation set scored every --validate_every steps.")
    flags.DEFINE_integer("validate_every", None, "Validation interval in steps (0: never, also with a "
                         "--validate_file, e.g. one a flagfile gives).", lower_bound=0)
    flags.DEFINE_enum("validate_mixed_precision", precision.INFERENCE_POLICY, list(precision.POLICIES),
                      "Precision policy validation embeds in, as `evaluate --mixed_precision` (default float32, "
                      "whatever --mixed_precision trains in: validation then runs a copy of the model built in "
                      "this policy, given the trained weights at each validation).")
    distribute.define_flags()
    precision.define_flags()
    define_all([(spec.name, option) for spec in specs for option in spec.options])


def flag_modules() -> list:
    """The modules whose flags `define_flags` defines: a command adopts their key flags, so its
    --help lists them (absl shows the main module's key flags)."""
    return [sys.modules[__name__], options, distribute]


def main(command: str) -> int:
    """Runs the command for the spec its selector flag names; the exit status."""
    selector = SELECTOR[command]
    names = [spec.name for spec in all_specs(command)]
    if FLAGS[selector].value is None:
        print(f"error: missing --{selector} (one of {', '.join(names)})", file=sys.stderr)
        return 2
    spec = get_method(FLAGS[selector].value)
    stray = stray_options(spec, command)
    if stray:
        print(f"error: {', '.join('--' + n for n in stray)} do(es) not apply to --{selector}={spec.name}",
              file=sys.stderr)
        return 2
    settings = training_settings(spec)
    for name, value in settings.items():
        FLAGS[name].value = value
    try:
        params = spec.resolve({o.name: FLAGS[o.name].value for o in spec.options if FLAGS[o.name].present})
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    fixed = spec.optimizer_settings(params)
    ignored = [name for name in fixed_flags(spec, params)
               if FLAGS[name].present and FLAGS[name].value != fixed[OPTIMIZER_FLAGS[name]]]
    if ignored:
        print(f"error: {', '.join('--' + n for n in ignored)} do(es) not apply to --{selector}={spec.name} with "
              f"these options, whose optimizer fixes {', '.join(f'{k} {v}' for k, v in fixed.items())}",
              file=sys.stderr)
        return 2
    return run(spec, params)


def remove_unstarted(model_dir: str) -> None:
    """Removes a model directory a failed run created before training began (holding only its
    lock, its built data and their staging), so a refused run leaves nothing behind; one where
    training began, or that another run now holds, is kept."""
    if not os.path.isdir(model_dir) or lock_holder(model_dir) is not None:
        return
    if all(name in (LOCK_FILE, "data") or name.startswith((".tmp-", ".data-worker-"))
           for name in os.listdir(model_dir)):
        shutil.rmtree(model_dir, ignore_errors=True)


def fixed_flags(spec, params) -> List[str]:
    """The shared optimizer flags whose value `params` leave without effect: the method's
    `optimizer_settings` fix their field (e.g. a released variant's own schedule)."""
    fixed = spec.optimizer_settings(params)
    return [name for name, field in OPTIMIZER_FLAGS.items() if field in fixed]


def training_settings(spec, flag_values=None) -> Dict[str, Any]:
    """The shared training flags as this run (`flag_values`, default the command's) uses them:
    given, else the method's, else the library's. --freeze_layers stays None when not given:
    `fitted_freeze_layers` fits the method's value to the encoder's depth once the encoder's
    config is read."""
    flag_values = FLAGS if flag_values is None else flag_values
    settings = {}
    for name, fallback in TRAINING_DEFAULTS.items():
        value = flag_values[name].value
        settings[name] = (value if value is not None or name == "freeze_layers"
                          else spec.defaults.get(name, fallback))
    return settings


def fitted_freeze_layers(spec, given: Optional[int], num_layers: int, checkpoint: str) -> Tuple[int, Optional[str]]:
    """(--freeze_layers for an encoder of `num_layers` layers, a note when the method's value was
    adapted). A given value that leaves no layer to train is refused with one that would; the
    method's own value (the paper's, for BERT-base's 12 layers) adapts instead: a bottom count
    that would freeze every layer becomes the bottom half, a top count beyond the depth trains
    every layer."""
    if given is not None:
        if given >= num_layers:
            raise ValueError(f"--freeze_layers={given} would freeze all {num_layers} layers of {checkpoint}; "
                             f"give at most {num_layers - 1}, e.g. --freeze_layers={num_layers // 2} (the bottom half)")
        if given < -num_layers:
            raise ValueError(f"--freeze_layers={given} would train the top {-given} layers of {checkpoint}, which "
                             f"has {num_layers}; --freeze_layers=-{num_layers} trains them all")
        return given, None
    paper = spec.defaults.get("freeze_layers", TRAINING_DEFAULTS["freeze_layers"])
    if paper >= num_layers:
        fitted = num_layers // 2
        return fitted, (f"freeze_layers: {spec.name}'s paper freezes the embeddings and the bottom {paper} layers; "
                        f"{checkpoint} has {num_layers}, so the embeddings and the bottom {fitted} (half) are frozen "
                        "(--freeze_layers=N to choose)")
    if paper < -num_layers:
        return -num_layers, (f"freeze_layers: {spec.name}'s paper trains only the top {-paper} layers; {checkpoint} "
                             f"has {num_layers}, so all of them train, the embeddings frozen (--freeze_layers=N to choose)")
    return paper, None


def run_header(spec, params: Dict[str, Any]) -> str:
    """The settings this run uses: the shared ones the method's optimizer does not fix (the run's
    length as given, --max_steps or --num_epochs), then the method's options that apply
    (`MethodSpec.unused_options`), then the precision it trains in and, when it validates, the
    one it validates in."""
    fixed = fixed_flags(spec, params)
    shared = {name: getattr(FLAGS, name) for name in TRAINING_DEFAULTS if name != "num_epochs" and name not in fixed}
    shared.update({"max_steps": FLAGS.max_steps} if FLAGS.max_steps else {"num_epochs": FLAGS.num_epochs})
    unused = set(spec.unused_options(params))
    shown = {**shared, **{k: v for k, v in params.items() if k not in unused}, **spec.optimizer_settings(params),
             "mixed_precision": FLAGS.mixed_precision}
    if FLAGS.validate_file and FLAGS.validate_every:
        shown["validate_mixed_precision"] = FLAGS.validate_mixed_precision
    return f"{spec.name}: " + ", ".join(f"{name} {value}" for name, value in shown.items() if value is not None)


def steps_per_epoch(examples: int, batch_size: int) -> float:
    """Full batches in one pass over `examples`, the partial last one dropped as the papers'
    `DataLoader(drop_last=True)` drops it; a corpus smaller than a batch counts its fraction."""
    return examples // batch_size if examples >= batch_size else examples / batch_size


def data_summary(manifest: Dict[str, Any], max_steps: int) -> str:
    """What the run reads: the built examples, what the build left out (examples over the max
    length, bad lines skipped, dialogues under the minimum turns, the tokens cut at the max
    length) and the epochs its steps make."""
    counts = manifest["counts"]
    examples = counts["examples"]
    dropped, skipped = counts.get("dropped_over_length", 0), counts.get("skipped_lines", 0)
    short = counts.get("dropped_under_min_turns", 0)
    left_out = ([f"{dropped} dropped for exceeding {manifest['max_length']} tokens"] if dropped else []) + (
        [f"{skipped} bad lines skipped"] if skipped else []) + (
        [f"{short} dialogues of fewer than {manifest['min_turns']} turns dropped"] if short else [])
    cuts = describe_cuts(manifest)
    left_out += [cuts] if cuts else []
    return (f"data: {examples} {manifest['builder']['method']} examples from {counts['dialogues']} dialogues in "
            f"{manifest['directory']}" + (f" ({'; '.join(left_out)})" if left_out else "") +
            f"; {max_steps} steps x batch {FLAGS.batch_size} = "
            f"{max_steps / steps_per_epoch(examples, FLAGS.batch_size):.2f} epochs of "
            + ("length-bucketed batches" if FLAGS.bucket_by_length else "uniformly shuffled batches"))


def run(spec, params: Dict[str, Any]) -> int:
    """Trains `spec`'s model with `params` on --train_file; the exit status. A model directory the
    run created is removed when it fails before training began (`remove_unstarted`)."""
    created = bool(FLAGS.model_dir) and not os.path.lexists(FLAGS.model_dir)
    status = _run(spec, params)
    if status and created:
        remove_unstarted(FLAGS.model_dir)
    return status


def _run(spec, params: Dict[str, Any]) -> int:
    """`run`'s work."""
    from tfdialemb.data.build import BuildOptions  # pylint: disable=import-outside-toplevel
    from tfdialemb.encoders import load_tokenizer  # pylint: disable=import-outside-toplevel
    from tfdialemb.training import data  # pylint: disable=import-outside-toplevel

    missing = [f"--{n}" for n in ("train_file", "model_dir", "init_checkpoint") if not getattr(FLAGS, n)]
    if missing:
        print(f"error: missing {', '.join(missing)}", file=sys.stderr)
        return 2
    if not FLAGS.max_steps and not FLAGS.num_epochs:
        print("error: give --max_steps or --num_epochs", file=sys.stderr)
        return 2
    if os.path.realpath(FLAGS.model_dir) == os.path.realpath(FLAGS.init_checkpoint):
        print(f"error: --model_dir is --init_checkpoint ({FLAGS.model_dir}): the run's checkpoints would take the "
              "place of the encoder it starts from; give another --model_dir", file=sys.stderr)
        return 2
    if FLAGS.validate_file and FLAGS.validate_every is None:
        print("error: --validate_file needs --validate_every=N (the steps between validations; 0 trains without "
              "validating)", file=sys.stderr)
        return 2
    if FLAGS.validate_every and not FLAGS.validate_file:
        print(f"error: --validate_every={FLAGS.validate_every} needs --validate_file; without it no validation runs",
              file=sys.stderr)
        return 2
    if FLAGS.validate_file and FLAGS.validate_every:
        try:
            check_input_file(FLAGS.validate_file, "validation file")
        except OSError as e:
            return report_error(e)
    lock = contextlib.ExitStack()
    try:
        check_writable(FLAGS.model_dir, directory_output=True)
        encoder_config = init_encoder_config(FLAGS.init_checkpoint, FLAGS.model_dir)
        FLAGS.max_length = usable_max_length(encoder_config, FLAGS.max_length)
        FLAGS.freeze_layers, freezing = fitted_freeze_layers(spec, FLAGS.freeze_layers, encoder_config.num_layers,
                                                             FLAGS.init_checkpoint)
        FLAGS.mixed_precision = precision.resolve(FLAGS.mixed_precision)  # printed and recorded as it runs
        print(run_header(spec, params), flush=True)
        if freezing:
            print(freezing, flush=True)
        run_settings = TrainingRun(FLAGS.init_checkpoint, FLAGS.batch_size, FLAGS.max_length, FLAGS.seed, load)
        for warning in spec.check(params, run_settings):
            print(f"warning: {warning}", file=sys.stderr)
        strategy = distribute.make_strategy(FLAGS.strategy, FLAGS.devices, FLAGS.collective_timeout)
        chief = distribute.is_chief(strategy)
        if chief:  # workers write their own subdirectories
            lock.enter_context(directory_lock(FLAGS.model_dir, "training run"))
            report_removed(remove_leftovers(FLAGS.model_dir), FLAGS.model_dir)
        tokenizer = load_tokenizer(FLAGS.init_checkpoint)
        data_dir = os.path.join(FLAGS.model_dir, "data" if chief else
                                f".data-worker-{strategy.cluster_resolver.task_id}")
        options = BuildOptions(max_length=FLAGS.max_length, seed=FLAGS.seed, num_shards=FLAGS.num_shards,
                               merge_consecutive_turns=FLAGS.merge_consecutive_turns,
                               min_turns=FLAGS.min_turns, pool_dialogues=FLAGS.pool_dialogues,
                               **spec.build_options(params))
        builder = make_builder(spec.builder, spec.builder_params(params))
        train_file = spec.training_file(FLAGS.train_file, data_dir, params, run_settings)
        building = Progress(None, f"dialogues read into {spec.builder} examples")
        manifest = data.prepare(train_file, data_dir, builder, tokenizer, options, ErrorPolicy("fail"),
                                on_dialogue=building.advance)
        if building.done:
            building.finish()
        auxiliary = spec.auxiliary(params, run_settings)
        encoder_options = spec.encoder_options(params)
        config = method_config(spec, params, manifest, tokenizer, encoder_options, _training_record())
        if chief:  # written once the loop has restored the checkpoint it resumes from
            check_method_config(FLAGS.model_dir, config)
    except (OSError, ValueError) as e:
        lock.close()
        return report_error(e)
    with lock:
        return _train(spec, params, PreparedRun(strategy, tokenizer, manifest, auxiliary, encoder_options,
                                                config, run_settings))


ENCODER_SHAPE = ("vocab_size", "hidden_size", "num_layers", "num_attention_heads", "intermediate_size",
                 "max_position_embeddings", "type_vocab_size", "embedding_size")
"""The encoder config fields that set the shapes of its weights and come from --init_checkpoint
alone (role and turn embeddings are the method's encoder options, compared with method.json)."""


def init_encoder_config(init_checkpoint: str, model_dir: str):
    """The encoder config of `init_checkpoint`, whose weight file is checked complete
    (`check_weight_files`); a ValueError naming the shapes that differ when `model_dir` already
    holds checkpoints of an encoder of other shapes, which it cannot resume."""
    from tfdialemb.encoders.checkpoint import (  # pylint: disable=import-outside-toplevel
        OWN_CONFIG,
        check_weight_files,
        load_encoder_config,
    )

    config = load_encoder_config(init_checkpoint)
    check_weight_files(init_checkpoint)
    if os.path.isfile(os.path.join(model_dir, "checkpoint")) and os.path.isfile(os.path.join(model_dir, OWN_CONFIG)):
        trained = load_encoder_config(model_dir)
        differ = setting_differences({name: getattr(trained, name) for name in ENCODER_SHAPE},
                                     {name: getattr(config, name) for name in ENCODER_SHAPE})
        if differ:
            raise ValueError(f"{model_dir}: holds checkpoints of another encoder than {init_checkpoint}'s "
                             f"({'; '.join(differ)}); use a new --model_dir, or the --init_checkpoint it was "
                             "trained from to resume")
    return config


@dataclasses.dataclass(frozen=True)
class PreparedRun:
    """What `run` settles before the training loop: the strategy, the data, the model's record."""
    strategy: Any
    tokenizer: Any
    manifest: Dict[str, Any]
    auxiliary: Optional[Callable]
    encoder_options: Dict[str, Any]
    config: Dict[str, Any]
    run_settings: Any


def _train(spec, params, prepared: PreparedRun) -> int:
    """The training loop of `run`, once the data is prepared and the model directory locked."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    from tfdialemb.data.build import SHUFFLED_ORDER  # pylint: disable=import-outside-toplevel
    from tfdialemb.encoders import CheckpointError, load_pretrained  # pylint: disable=import-outside-toplevel
    from tfdialemb.training.data import training_batches  # pylint: disable=import-outside-toplevel
    from tfdialemb.training.loop import (  # pylint: disable=import-outside-toplevel
        LoopConfig,
        NonFiniteError,
        TrainingLoop,
        terminate_as_interrupt,
    )
    from tfdialemb.training.optimizer import OptimizerConfig  # pylint: disable=import-outside-toplevel

    tokenizer, manifest, auxiliary, run_settings = (prepared.tokenizer, prepared.manifest, prepared.auxiliary,
                                                    prepared.run_settings)
    precision.apply(FLAGS.mixed_precision)
    apply_training_graph_options()
    examples = manifest["counts"]["examples"]
    epoch = steps_per_epoch(examples, FLAGS.batch_size)
    max_steps = FLAGS.max_steps or max(1, math.ceil(FLAGS.num_epochs * epoch))
    print(data_summary(manifest, max_steps), flush=True)
    if FLAGS.batch_size > examples:
        print(f"warning: --batch_size={FLAGS.batch_size} exceeds the {examples} examples built from "
              f"{FLAGS.train_file}: every batch repeats examples", file=sys.stderr)
    if manifest.get("example_order") != SHUFFLED_ORDER:
        print(f"warning: {manifest['directory']} was built in the corpus' order, so its batches are not uniform "
              "samples of the corpus; rebuild it to draw them as the papers do", file=sys.stderr)

    def build_method():
        tf.keras.utils.set_random_seed(FLAGS.seed)
        encoder = load_pretrained(FLAGS.init_checkpoint, **prepared.encoder_options).encoder
        encoder.freeze_bottom(FLAGS.freeze_layers)
        model = spec.make_model(encoder, params)
        spec.after_build(model, params, run_settings)
        return model

    def dataset_fn(context):
        dataset = training_batches(manifest["directory"], FLAGS.batch_size, FLAGS.seed, FLAGS.bucket_by_length,
                                   context)
        dataset = spec.batches(dataset, tokenizer, params, run_settings)
        return merge_auxiliary(dataset, auxiliary(context, tokenizer)) if auxiliary else dataset

    validate = None
    if FLAGS.validate_file and FLAGS.validate_every:
        try:
            validate = _validation(FLAGS.validate_task, FLAGS.validate_file, tokenizer, prepared.config)
        except (OSError, ValueError) as e:
            return report_error(e)
        if FLAGS.validate_mixed_precision != FLAGS.mixed_precision:
            from tfdialemb.training.validation_copy import ValidationCopy  # pylint: disable=import-outside-toplevel

            validate = ValidationCopy(build_method, FLAGS.validate_mixed_precision, FLAGS.model_dir, validate)

    try:
        schedule_steps = spec.schedule_steps(params, examples, FLAGS.num_epochs)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if schedule_steps:
        print(f"learning-rate schedule over {schedule_steps} steps; the run takes {max_steps}", flush=True)
    loop_config = LoopConfig(
        model_dir=FLAGS.model_dir, max_steps=max_steps,
        optimizer=OptimizerConfig(**{"learning_rate": FLAGS.learning_rate, "schedule": FLAGS.lr_schedule,
                                     "warmup_steps": int(FLAGS.warmup_fraction * max_steps),
                                     "weight_decay": FLAGS.weight_decay, **spec.optimizer_settings(params),
                                     "schedule_steps": schedule_steps}),
        checkpoint_every=FLAGS.checkpoint_every, log_every=FLAGS.log_every,
        validate_every=FLAGS.validate_every or 0, jit_compile=FLAGS.jit_compile,
        keep_best=get_evaluator(FLAGS.validate_task).selection if validate else None, seed=FLAGS.seed)
    print(f"building the {spec.name} model from {FLAGS.init_checkpoint}", flush=True)
    try:
        loop = TrainingLoop(prepared.strategy, build_method, dataset_fn, tokenizer, loop_config, validate,
                            record=lambda: write_method_config(FLAGS.model_dir, prepared.config))
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    with terminate_as_interrupt():  # also once the loop has ended, until its last line is out
        try:
            print(run_summary(loop.run(), max_steps))
        except (CheckpointError, NonFiniteError) as e:
            return report_error(e)
        except KeyboardInterrupt as e:  # the loop's own names the step it saved; one after it, the run's
            raise KeyboardInterrupt(str(e) or loop.saved_note()) from None
    return 0


def run_summary(scalars: Dict[str, float], max_steps: int) -> str:
    """The run's last line: the step reached and its last loss and metrics, or, when no step ran,
    that the model directory already held --max_steps (or more) steps."""
    step = int(scalars["step"])
    if set(scalars) == {"step"}:
        past = f", past --max_steps={max_steps}: its weights are those of step {step}" if step > max_steps else ""
        return f"nothing to train: {FLAGS.model_dir} already holds step {step}{past}"
    return f"trained to step {step} of {max_steps}: " + ", ".join(
        f"{k} {v:.4f}" for k, v in scalars.items() if k != "step")


def _training_record() -> Dict[str, Any]:
    """The training settings written to method.json (informative: a resumed run may change them)."""
    names = ("train_file", "init_checkpoint", "max_steps", "num_epochs", "batch_size", "learning_rate",
             "lr_schedule", "warmup_fraction", "weight_decay", "freeze_layers", "seed", "strategy",
             "mixed_precision", "jit_compile", "validate_mixed_precision", "bucket_by_length")
    return {name: getattr(FLAGS, name) for name in names}


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




def _validation(task: str, eval_file: str, tokenizer, config: Dict[str, Any]) -> Callable:
    """A validation hook: the evaluator of `task` on `eval_file` with the method's current model,
    embedded with the settings evaluation will read from the model directory's method.json."""
    evaluator = get_evaluator(task)
    kind = evaluator.kind
    if kind not in config["inference"]:  # as `evaluate` and `export` refuse it
        raise ValueError(f"--validate_task={task} embeds with a {kind} model; {config['method']} offers "
                         f"{', '.join(config['inference']) or 'sentence embeddings only'}")
    settings, _ = resolve(kind, recorded_settings(config, kind), {}, FLAGS.model_dir)
    options = OptionValues({"label_key": FLAGS.validate_label_key, "seed": FLAGS.seed, "batch_size": FLAGS.batch_size})
    score = evaluator.validation(eval_file, settings, options)  # a set that cannot be scored fails now
    runtimes: Dict[int, Any] = {}

    def validate(method, step):
        del step
        # One runtime per model (its encoder, or the method itself for a trained head), traced once.
        model = method if KINDS[kind].needs_head else method.encoder
        if id(model) not in runtimes:
            runtimes[id(model)] = runtime_class(kind).from_settings(model, tokenizer, settings)
        return score(runtimes[id(model)])

    return validate


def stray_options(spec, command: str, flag_values=None) -> List[str]:
    """Options of the command's other methods given on the command line (or in `flag_values`)."""
    flag_values = FLAGS if flag_values is None else flag_values
    own = {o.name for o in spec.options}
    return sorted({o.name for s in all_specs(command) for o in s.options
                   if o.name not in own and flag_values[o.name].present})
