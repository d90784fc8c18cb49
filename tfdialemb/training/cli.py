"""The training run every training command shares, from its settings to checkpoints.

`python -m tfdialemb.train` and `python -m tfdialemb.pretrain` define their flags with
`tfdialemb.training.flags`; `main` turns them into one `RunSettings` (`tfdialemb.training.settings`)
and the run — data preparation, strategy, freezing, optimizer, resume, the model directory's
`method.json` — reads only that object. Everything method-specific comes from the method's spec
(`tfdialemb.methods.spec`).
"""
import contextlib
import dataclasses
import functools
import math
import os
import shutil
import sys
from typing import Any, Callable, Dict, Optional

from absl import flags

from tfdialemb.core import distribute, precision
from tfdialemb.core.cli import report_error, report_removed, run_command
from tfdialemb.core.progress import Progress
from tfdialemb.data.examples import make_builder
from tfdialemb.data.records import describe_cuts
from tfdialemb.dialogue import ErrorPolicy
from tfdialemb.encoders.errors import CheckpointError
from tfdialemb.eval.evaluator import OptionValues, get_evaluator
from tfdialemb.core.files import LOCK_FILE, directory_lock, lock_holder, remove_leftovers
from tfdialemb.inference.kinds import load, runtime_class
from tfdialemb.kind_registry import KINDS, resolve
from tfdialemb.method_record import method_config, recorded_settings, refuse_other_run, write_method_config
from tfdialemb.methods.spec import TrainingRun
from tfdialemb.training.flags import define_flags, flag_modules
from tfdialemb.training.graph_options import apply_training_graph_options
from tfdialemb.training.settings import (
    OPTIMIZER_FLAGS,
    TRAINING_DEFAULTS,
    RunSettings,
    chosen_method,
    resolve_run_settings,
)

FLAGS = flags.FLAGS
flags.disclaim_key_flags()  # `launch` adopts the flags as key flags of the command that calls it (its --help)


def launch(command: str, command_module: str) -> None:
    """Defines the command's flags (those of every method registered by now, a user's own
    included) as key flags of `command_module`, then parses the command line and runs it."""
    define_flags(command)
    for module in flag_modules():
        flags.adopt_module_key_flags(module)
    run_command(functools.partial(_main_of_app, command), command_module)


def _main_of_app(command: str, argv) -> int:
    del argv
    return main(command)


def main(command: str) -> int:
    """Runs the command for the spec its selector flag names; the exit status."""
    try:
        spec, params = chosen_method(command, FLAGS)
    except ValueError as e:
        return report_error(e)
    return run(spec, params)


def run(spec, params) -> int:
    """Trains `spec`'s model with `params` and the command's other flags; the exit status."""
    try:
        settings = resolve_run_settings(spec, params, FLAGS)
    except (OSError, ValueError) as e:
        return report_error(e)
    return train(settings)


def train(settings: RunSettings) -> int:
    """Trains as `settings` say on their --train_file; the exit status. A model directory the
    run created is removed when it fails before training began (`remove_unstarted`)."""
    created = not os.path.lexists(settings.model_dir)
    status = _prepare_and_train(settings)
    if status and created:
        remove_unstarted(settings.model_dir)
    return status


def _prepare_and_train(settings: RunSettings) -> int:
    """`train`'s work: the data built and the model directory locked, then the training loop."""
    from tfdialemb.data.build import BuildOptions  # pylint: disable=import-outside-toplevel
    from tfdialemb.encoders.checkpoint import load_tokenizer  # pylint: disable=import-outside-toplevel
    from tfdialemb.training import data  # pylint: disable=import-outside-toplevel

    spec, params = settings.spec, settings.params
    lock = contextlib.ExitStack()
    try:
        print(run_header(settings), flush=True)
        if settings.freezing_note:
            print(settings.freezing_note, flush=True)
        method_run = TrainingRun(settings.init_checkpoint, settings.batch_size, settings.max_length, settings.seed,
                                 load)
        for warning in spec.check(params, method_run):
            print(f"warning: {warning}", file=sys.stderr)
        strategy = distribute.make_strategy(settings.strategy, settings.devices, settings.collective_timeout)
        chief = distribute.is_chief(strategy)
        if chief:  # workers write their own subdirectories
            lock.enter_context(directory_lock(settings.model_dir, "training run"))
            report_removed(remove_leftovers(settings.model_dir), settings.model_dir)
        tokenizer = load_tokenizer(settings.init_checkpoint)
        data_dir = os.path.join(settings.model_dir, "data" if chief else
                                f".data-worker-{strategy.cluster_resolver.task_id}")
        options = BuildOptions(max_length=settings.max_length, seed=settings.seed, num_shards=settings.num_shards,
                               merge_consecutive_turns=settings.merge_consecutive_turns,
                               min_turns=settings.min_turns, pool_dialogues=settings.pool_dialogues,
                               **settings.build_options)
        builder = make_builder(spec.builder, settings.builder_params)
        train_file = spec.training_file(settings.train_file, data_dir, params, method_run)
        building = Progress(None, f"dialogues read into {spec.builder} examples")
        manifest = data.prepare(train_file, data_dir, builder, tokenizer, options, ErrorPolicy("fail"),
                                on_dialogue=building.advance)
        if building.done:
            building.finish()
        auxiliary = spec.auxiliary(params, method_run)
        config = method_config(spec, params, manifest, tokenizer, settings.encoder_options, settings.training_record(),
                               settings.declared_inference)
        if chief and settings.recorded is not None:  # written once the loop has restored the checkpoint it resumes from
            refuse_other_run(settings.model_dir, settings.recorded, config)
    except (OSError, ValueError) as e:
        lock.close()
        return report_error(e)
    with lock:
        return _train_prepared(settings, PreparedRun(strategy, tokenizer, manifest, auxiliary, config, method_run))


@dataclasses.dataclass(frozen=True)
class PreparedRun:
    """What `train` settles before the training loop: the strategy, the data, the model's record."""
    strategy: Any
    tokenizer: Any
    manifest: Dict[str, Any]
    auxiliary: Optional[Callable]
    config: Dict[str, Any]
    method_run: TrainingRun


def _train_prepared(settings: RunSettings, prepared: PreparedRun) -> int:
    """The training loop of `train`, once the data is prepared and the model directory locked."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    from tfdialemb.data.build import SHUFFLED_ORDER  # pylint: disable=import-outside-toplevel
    from tfdialemb.encoders.checkpoint import load_pretrained  # pylint: disable=import-outside-toplevel
    from tfdialemb.training.data import training_batches  # pylint: disable=import-outside-toplevel
    from tfdialemb.training.loop import (  # pylint: disable=import-outside-toplevel
        LoopConfig,
        NonFiniteError,
        TrainingLoop,
        terminate_as_interrupt,
    )
    from tfdialemb.training.optimizer import OptimizerConfig  # pylint: disable=import-outside-toplevel

    spec, params = settings.spec, settings.params
    tokenizer, manifest, auxiliary, method_run = (prepared.tokenizer, prepared.manifest, prepared.auxiliary,
                                                  prepared.method_run)
    precision.apply(settings.mixed_precision)
    apply_training_graph_options()
    examples = manifest["counts"]["examples"]
    epoch = steps_per_epoch(examples, settings.batch_size)
    max_steps = settings.max_steps or max(1, math.ceil(settings.num_epochs * epoch))
    print(data_summary(manifest, max_steps, settings.batch_size, settings.bucket_by_length), flush=True)
    if settings.batch_size > examples:
        print(f"warning: --batch_size={settings.batch_size} exceeds the {examples} examples built from "
              f"{settings.train_file}: every batch repeats examples", file=sys.stderr)
    if manifest.get("example_order") != SHUFFLED_ORDER:
        print(f"warning: {manifest['directory']} was built in the corpus' order, so its batches are not uniform "
              "samples of the corpus; rebuild it to draw them as the papers do", file=sys.stderr)

    def build_method():
        tf.keras.utils.set_random_seed(settings.seed)
        encoder = load_pretrained(settings.init_checkpoint, **settings.encoder_options).encoder
        encoder.freeze_bottom(settings.freeze_layers)
        model = spec.make_model(encoder, params)
        spec.after_build(model, params, method_run)
        return model

    def dataset_fn(context):
        dataset = training_batches(manifest["directory"], settings.batch_size, settings.seed,
                                   settings.bucket_by_length, context)
        dataset = spec.batches(dataset, tokenizer, params, method_run)
        return merge_auxiliary(dataset, auxiliary(context, tokenizer)) if auxiliary else dataset

    validate = None
    if settings.validates:
        try:
            validate = _validation(settings, tokenizer, prepared.config)
        except (OSError, ValueError) as e:
            return report_error(e)
        if settings.validate_mixed_precision != settings.mixed_precision:
            from tfdialemb.training.validation_copy import ValidationCopy  # pylint: disable=import-outside-toplevel

            validate = ValidationCopy(build_method, settings.validate_mixed_precision, settings.model_dir, validate)

    try:
        schedule_steps = spec.schedule_steps(params, examples, settings.num_epochs)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if schedule_steps:
        print(f"learning-rate schedule over {schedule_steps} steps; the run takes {max_steps}", flush=True)
        if max_steps > schedule_steps:
            print(f"warning: {past_schedule(schedule_steps, max_steps)}", file=sys.stderr)
    loop_config = LoopConfig(
        model_dir=settings.model_dir, max_steps=max_steps,
        optimizer=OptimizerConfig(**{"learning_rate": settings.learning_rate, "schedule": settings.lr_schedule,
                                     "warmup_steps": int(settings.warmup_fraction * max_steps),
                                     "weight_decay": settings.weight_decay, **settings.fixed_optimizer,
                                     "schedule_steps": schedule_steps}),
        checkpoint_every=settings.checkpoint_every, log_every=settings.log_every,
        validate_every=settings.validate_every or 0, jit_compile=settings.jit_compile,
        keep_best=get_evaluator(settings.validate_task).selection if validate else None, seed=settings.seed)
    print(f"building the {spec.name} model from {settings.init_checkpoint}", flush=True)
    try:
        loop = TrainingLoop(prepared.strategy, build_method, dataset_fn, tokenizer, loop_config, validate,
                            record=functools.partial(write_method_config, settings.model_dir, prepared.config,
                                                   spec.from_record))
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    with terminate_as_interrupt():  # also once the loop has ended, until its last line is out
        try:
            print(run_summary(loop.run(), max_steps, settings.model_dir))
        except (CheckpointError, NonFiniteError) as e:
            return report_error(e)
        except KeyboardInterrupt as e:  # the loop's own names the step it saved; one after it, the run's
            raise KeyboardInterrupt(str(e) or loop.saved_note()) from None
    return 0


def _validation(settings: RunSettings, tokenizer, config: Dict[str, Any]) -> Callable:
    """A validation hook: the evaluator of --validate_task on --validate_file with the method's
    current model, embedded with the settings evaluation will read from the model directory's
    method.json."""
    task = settings.validate_task
    evaluator = get_evaluator(task)
    kind = evaluator.kind
    if kind not in config["inference"]:  # as `evaluate` and `export` refuse it
        raise ValueError(f"--validate_task={task} embeds with a {kind} model; {config['method']} offers "
                         f"{', '.join(config['inference']) or 'sentence embeddings only'}")
    kind_settings, _ = resolve(kind, recorded_settings(config, kind), {}, settings.model_dir)
    options = OptionValues({"label_key": settings.validate_label_key, "seed": settings.seed,
                            "batch_size": settings.batch_size})
    # A set that cannot be scored fails now.
    score = evaluator.validation(settings.validate_file, kind_settings, options)
    runtimes: Dict[int, Any] = {}

    def validate(method, step):
        del step
        # One runtime per model (its encoder, or the method itself for a trained head), traced once.
        model = method if KINDS[kind].needs_head else method.encoder
        if id(model) not in runtimes:
            runtimes[id(model)] = runtime_class(kind).from_settings(model, tokenizer, kind_settings)
        return score(runtimes[id(model)])

    return validate


def remove_unstarted(model_dir: str) -> None:
    """Removes a model directory a failed run created before training began (holding only its
    lock, its built data and their staging), so a refused run leaves nothing behind; one where
    training began, or that another run now holds, is kept."""
    if not os.path.isdir(model_dir) or lock_holder(model_dir) is not None:
        return
    if all(name in (LOCK_FILE, "data") or name.startswith((".tmp-", ".data-worker-"))
           for name in os.listdir(model_dir)):
        shutil.rmtree(model_dir, ignore_errors=True)


def run_header(settings: RunSettings) -> str:
    """The settings the run uses: the shared ones the method's optimizer does not fix (the run's
    length as given, --max_steps or --num_epochs), then the method's options that apply
    (`MethodSpec.unused_options`), then the precision it trains in and, when it validates, the
    one it validates in."""
    fixed = [name for name, field in OPTIMIZER_FLAGS.items() if field in settings.fixed_optimizer]
    shared = {name: getattr(settings, name) for name in TRAINING_DEFAULTS if name != "num_epochs" and name not in fixed}
    shared.update({"max_steps": settings.max_steps} if settings.max_steps else {"num_epochs": settings.num_epochs})
    unused = set(settings.unused_options)
    shown = {**shared, **{k: v for k, v in settings.params.items() if k not in unused}, **settings.fixed_optimizer,
             "mixed_precision": settings.mixed_precision}
    if settings.validates:
        shown["validate_mixed_precision"] = settings.validate_mixed_precision
    return f"{settings.spec.name}: " + ", ".join(f"{name} {value}" for name, value in shown.items()
                                                 if value is not None)


def past_schedule(schedule_steps: int, max_steps: int) -> str:
    """What a run of `max_steps` does past a learning-rate schedule of `schedule_steps` (a
    method's own span, e.g. dial2vec's released one over the training examples)."""
    return (f"steps {schedule_steps + 1}-{max_steps} run past the end of the learning-rate schedule, at the rate it "
            "gives there (a linear decay that is not floored turns negative)")


def steps_per_epoch(examples: int, batch_size: int) -> float:
    """Full batches in one pass over `examples`, the partial last one dropped as the papers'
    `DataLoader(drop_last=True)` drops it; a corpus smaller than a batch counts its fraction."""
    return examples // batch_size if examples >= batch_size else examples / batch_size


def data_summary(manifest: Dict[str, Any], max_steps: int, batch_size: int, bucket_by_length: bool) -> str:
    """What the run reads: the built examples, what the build left out (examples over the max
    length, bad lines skipped, dialogues under the minimum turns, the tokens cut at the max
    length) and the epochs its steps of `batch_size` make."""
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
            f"; {max_steps} steps x batch {batch_size} = "
            f"{max_steps / steps_per_epoch(examples, batch_size):.2f} epochs of "
            + ("length-bucketed batches" if bucket_by_length else "uniformly shuffled batches"))


def run_summary(scalars: Dict[str, float], max_steps: int, model_dir: str) -> str:
    """The run's last line: the step reached and its last loss and metrics, or, when no step ran,
    that `model_dir` already held --max_steps (or more) steps."""
    step = int(scalars["step"])
    if set(scalars) == {"step"}:
        past = f", past --max_steps={max_steps}: its weights are those of step {step}" if step > max_steps else ""
        return f"nothing to train: {model_dir} already holds step {step}{past}"
    return f"trained to step {step} of {max_steps}: " + ", ".join(
        f"{k} {v:.4f}" for k, v in scalars.items() if k != "step")


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
