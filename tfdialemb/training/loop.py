"""The shared training loop: a custom train step under any tf.distribute strategy, checkpoints
every N steps, exact resume after an interruption, TensorBoard scalars, a progress bar and
validation hooks.

Resume is exact: the input pipeline is deterministic for a seed (its random draws, such as
augmentation, masking and negative sampling, are stateless per batch), so a restarted run skips
the batches the restored step count says were consumed (per input pipeline, one per replica it
feeds per step) and continues with the next one — no batch is repeated or skipped; and every
dropout layer draws its masks from one `tf.random.Generator` whose state the checkpoint holds
(`mask_dropout.draw_seeds_from`). A run killed at any point and rerun ends with the weights,
bit for bit, of the run that was never interrupted.
"""
import collections
import contextlib
import dataclasses
import glob
import json
import logging
import math
import os
import shutil
import signal
from typing import Callable, Dict, Optional, Tuple

import tensorflow as tf
import tf_keras

from tfdialemb.core.progress import Progress
from tfdialemb.core.distribute import is_chief
from tfdialemb.encoders.checkpoint import checkpoint_directory, write_model_files
from tfdialemb.encoders.mask_dropout import draw_seeds_from
from tfdialemb.encoders.errors import CheckpointError
from tfdialemb.encoders.weights import DAMAGED_CHECKPOINT_ERRORS
from tfdialemb.core.files import atomic_open, output_error_of, write_error
from tfdialemb.method_record import METHOD_CONFIG, VALIDATION_HISTORY
from tfdialemb.methods.models.base import Method
from tfdialemb.core.precision import with_loss_scaling
from tfdialemb.core.reports import report_json
from tfdialemb.text.tokenizer import BertTokenizer
from tfdialemb.training.optimizer import OptimizerConfig, create_optimizer

_log = logging.getLogger(__name__)
BEST_DIR = "best"
"""MODEL_DIR/best: a model directory of its own holding the best validated weights."""
BEST_RECORD = "best.json"
"""In BEST_DIR: {"step": N, "metric": name, "value": x, "better": "max"|"min"}."""
RUNNING_STEPS = 10
"""The progress line shows the loss and metrics averaged over this many last steps."""


class NonFiniteError(RuntimeError):
    """A step gave a NaN or infinite loss, or left NaN or infinite weights: training stops there
    and nothing of that step is saved."""


@dataclasses.dataclass(frozen=True)
class LoopConfig:
    model_dir: str
    max_steps: int
    optimizer: OptimizerConfig = OptimizerConfig()
    checkpoint_every: int = 200
    keep_checkpoints: int = 3
    log_every: int = 50
    validate_every: int = 0
    jit_compile: bool = False
    keep_best: Optional[Tuple[str, str]] = None
    """(metric, "max" or "min"): after each validation whose `metric` beats the best so far, the
    weights are written to MODEL_DIR/best (model selection on the validation set)."""
    seed: int = 0
    """Seed of the generator the dropout masks are drawn from."""


class TrainingLoop:
    """Trains `build_method()` on `dataset_fn(input_context)` until `config.max_steps`.

    `dataset_fn` returns an infinite, deterministic per-replica-batched dataset for one input
    pipeline; `validate(method, step)` (optional) returns named metrics logged with the losses;
    `record()` (optional) writes the run's description once its checkpoint is restored and steps
    remain, so a resume refused there, or with nothing to train, leaves the description as it was.
    The model directory holds `ckpt-STEP` checkpoints whose root has `encoder`, so it loads with
    `load_pretrained` (and as `--init_checkpoint`), plus the config and vocabulary files.
    """

    def __init__(self, strategy: tf.distribute.Strategy, build_method: Callable[[], Method],
                 dataset_fn: Callable[[tf.distribute.InputContext], tf.data.Dataset],
                 tokenizer: BertTokenizer, config: LoopConfig,
                 validate: Optional[Callable[[Method, int], Dict[str, float]]] = None,
                 record: Optional[Callable[[], None]] = None):
        if config.max_steps < 1:
            raise ValueError(f"max_steps must be positive, got {config.max_steps}")
        if config.jit_compile and strategy.num_replicas_in_sync > 1 and any(
                tf.DeviceSpec.from_string(device).device_type != "GPU" for device in strategy.extended.worker_devices):
            # TensorFlow all-reduces inside an XLA-compiled replica step only between GPUs.
            raise ValueError("jit_compile needs one device or GPU replicas, got "
                             f"{', '.join(strategy.extended.worker_devices)}")
        self.strategy = strategy
        self.config = config
        self.tokenizer = tokenizer
        self.dataset_fn = dataset_fn
        self.validate = validate
        self.record = record
        self.chief = is_chief(strategy)
        with strategy.scope():
            self.method = build_method()
            if config.jit_compile and hasattr(self.method, "encoder"):
                self.method.encoder.use_fixed_shapes()  # XLA compiles fixed shapes
            # Created in the strategy's scope, each replica draws its own masks from it.
            self.dropout_seeds = tf.random.Generator.from_seed(config.seed)
            draw_seeds_from(self.method, self.dropout_seeds)
            # One optimizer per objective the method trains in turn (one for most methods).
            self.optimizers = {name: with_loss_scaling(create_optimizer(config.optimizer, config.max_steps),
                                                       self.method.compute_dtype)
                               for name in self.method.objectives}
            for optimizer in self.optimizers.values():
                # Slots made now, not in the first step, which would then be traced twice.
                optimizer.build(self.method.trainable_variables)
            self.step = tf.Variable(0, dtype=tf.int64, trainable=False, name="global_step")
        self.optimizer = self.optimizers[self.method.objectives[0]]
        self._saved_objects = dict(
            encoder=self.method.encoder, model=self.method, optimizer=self.optimizer, step=self.step,
            dropout_seeds=self.dropout_seeds,
            **{f"optimizer_{name}": self.optimizers[name] for name in self.method.objectives[1:]})
        self.checkpoint = tf.train.Checkpoint(**self._saved_objects)
        self._checkpoint_dir = config.model_dir if self.chief else os.path.join(
            config.model_dir, f".worker-{strategy.cluster_resolver.task_id}")
        self.manager = tf.train.CheckpointManager(
            self.checkpoint, self._checkpoint_dir, max_to_keep=config.keep_checkpoints,
            step_counter=self.step)
        self._progress: Optional[Progress] = None

    def restore(self) -> int:
        """Restores the newest readable checkpoint of the model directory, if any; returns its step.

        A checkpoint whose files are damaged (a truncated data file, say) is reported, removed
        from the directory's record and its files renamed `*.damaged`, and the one before it is
        tried; a directory whose checkpoints are all damaged is refused rather than trained from
        scratch, and one that holds another model is refused.
        """
        remove_staging_leftovers(self.config.model_dir)
        state = tf.train.get_checkpoint_state(self.config.model_dir)
        recorded = list(state.all_model_checkpoint_paths) if state else []
        damaged = []
        for path in reversed(recorded):
            try:
                self.checkpoint.read(path).expect_partial().assert_existing_objects_matched()
            except DAMAGED_CHECKPOINT_ERRORS as e:
                _log.warning("%s is damaged (%s); trying the checkpoint before it", path,
                             str(e).splitlines()[0][:200])
                damaged.append(path)
                continue
            except (AssertionError, ValueError) as e:
                if not self._read_without_dropout_state(path):
                    raise CheckpointError(f"{path}: does not hold this run's model ({str(e).splitlines()[0][:300]}); "
                                          "use another --model_dir") from None
            if damaged:
                forget_checkpoints(self.config.model_dir, recorded, damaged)
                self.manager = tf.train.CheckpointManager(
                    self.checkpoint, self._checkpoint_dir, max_to_keep=self.config.keep_checkpoints,
                    step_counter=self.step)
            _log.info("resumed from %s at step %d", path, int(self.step.numpy()))
            return int(self.step.numpy())
        if damaged:
            raise CheckpointError(f"{self.config.model_dir}: every checkpoint is damaged ({', '.join(damaged)}); "
                             "move them away to train from the start")
        return 0

    def _read_without_dropout_state(self, path: str) -> bool:
        """Restores a checkpoint that holds everything but the dropout generator's state, with a
        warning that the masks after it differ from an uninterrupted run's; False for any other."""
        if any(name.startswith("dropout_seeds/") for name, _ in tf.train.list_variables(path)):
            return False
        kept = {name: value for name, value in self._saved_objects.items() if name != "dropout_seeds"}
        try:
            tf.train.Checkpoint(**kept).read(path).expect_partial().assert_existing_objects_matched()
        except (AssertionError, ValueError):
            return False
        _log.warning("%s holds no dropout state: the dropout masks from here on differ from those of an "
                     "uninterrupted run", path)
        return True

    def run(self) -> Dict[str, float]:
        """Trains to `max_steps`; returns the last logged scalars. Ctrl-C / SIGTERM save first; a
        NaN or infinite loss, or weights made so, raise NonFiniteError without saving that step."""
        start = self.restore()
        if self.chief:
            write_model_files(self.config.model_dir, self.method.encoder, self.tokenizer)
            self._forget_validations_after(start)
            self._forget_best_after(start)
        if start >= self.config.max_steps:
            return {"step": float(start)}
        if self.chief and self.record:
            self.record()
        dataset = self.strategy.distribute_datasets_from_function(
            lambda context: self.dataset_fn(context).skip(
                start * context.num_replicas_in_sync // context.num_input_pipelines))
        iterator = iter(dataset)
        train_step = self._make_train_step()
        writer = tf.summary.create_file_writer(
            os.path.join(self.config.model_dir, "train")) if self.chief else tf.summary.create_noop_writer()
        progress = Progress(self.config.max_steps - start, "steps") if self.chief else None
        self._progress = progress
        if progress:
            progress.advance(0, "the first step traces the training graph")
        running = RunningMeans(RUNNING_STEPS)
        scalars: Dict[str, float] = {}
        with terminate_as_interrupt():
            try:
                with writer.as_default():
                    while int(self.step.numpy()) < self.config.max_steps:
                        loss, metrics = train_step(iterator)
                        step = int(self.step.numpy())
                        scalars = {"loss": float(loss), **{k: float(v) for k, v in metrics.items()}}
                        if not math.isfinite(scalars["loss"]):
                            raise self._non_finite(step, f"the loss is {scalars['loss']}")
                        if step % self.config.log_every == 0 or step == self.config.max_steps:
                            self._log_scalars(step, scalars)
                        if self.validate and self.config.validate_every and step % self.config.validate_every == 0:
                            self._record_validation(step, self.validate(self.method, step))
                        if step % self.config.checkpoint_every == 0:
                            self._save()
                        running.add(scalars)
                        if progress:
                            progress.advance(1, running.describe())
                self._save()
            except KeyboardInterrupt:
                self._save()
                raise KeyboardInterrupt(self.saved_note()) from None
            finally:
                if progress:
                    progress.finish()
                self._progress = None
                self._clean_worker_dir()
        return dict(scalars, step=float(self.step.numpy()))

    def saved_note(self) -> str:
        """What a run interrupted now leaves: the step last saved, which the same command resumes
        from (or, saved at --max_steps, the trained model)."""
        latest = self.manager.latest_checkpoint
        if latest is None:
            return f"no checkpoint saved in {self.config.model_dir} yet"
        step = int(latest.rsplit("-", 1)[1])
        if step >= self.config.max_steps:
            return f"saved step {step} to {self.config.model_dir}, the last: training is complete"
        return f"saved step {step} to {self.config.model_dir}; the same command resumes from it"

    def _make_train_step(self):
        """The step over the next batch of every replica; its trace serves every batch shape, as it
        reads the batch from the iterator, whose element spec leaves batch and lengths unknown."""
        method, optimizers, strategy = self.method, self.optimizers, self.strategy

        def objective_step(objective, batch):
            optimizer = optimizers[objective]
            loss_scaling = isinstance(optimizer, tf_keras.mixed_precision.LossScaleOptimizer)
            with tf.GradientTape() as tape:
                losses, metrics = method.objective_loss(objective, batch, training=True)
                local = tf.cast(tf.shape(losses)[0], tf.float32)
                # The global number of examples, so partial batches weigh by their true size.
                total = tf.distribute.get_replica_context().all_reduce(tf.distribute.ReduceOp.SUM, local)
                loss = tf.reduce_sum(losses) / total
                differentiated = optimizer.get_scaled_loss(loss) if loss_scaling else loss
            variables = method.trainable_variables
            grads = tape.gradient(differentiated, variables)
            if loss_scaling:
                grads = optimizer.get_unscaled_gradients(grads)
            optimizer.apply_gradients(
                [(g, v) for g, v in zip(grads, variables) if g is not None])
            return loss, {name: tf.reduce_sum(tf.cast(value, tf.float32)) / total for name, value in metrics.items()}

        def replica_step(batch):
            """Each objective in turn, on the weights the one before it updated; the loss logged is
            their sum."""
            loss, means = 0.0, {}
            for objective in method.objectives:
                objective_loss, objective_means = objective_step(objective, batch)
                loss += objective_loss
                means.update(objective_means)
            return loss, means

        if self.config.jit_compile:
            replica_step = tf.function(replica_step, jit_compile=True)

        @tf.function
        def train_step(iterator):
            loss, metrics = strategy.run(replica_step, args=(next(iterator),))
            self.step.assign_add(1)
            reduce = lambda value: strategy.reduce(tf.distribute.ReduceOp.SUM, value, axis=None)  # noqa: E731
            return reduce(loss), {name: reduce(value) for name, value in metrics.items()}

        return train_step

    def _log_scalars(self, step: int, scalars: Dict[str, float]) -> None:
        for name, value in scalars.items():
            tf.summary.scalar(name, value, step=step)
        lr = self.optimizer.learning_rate
        if callable(lr):
            tf.summary.scalar("learning_rate", lr(step), step=step)
        if self.chief:
            self._say(f"step {step}: " + ", ".join(f"{k} {v:.4f}" for k, v in scalars.items()))

    def _say(self, text: str) -> None:
        """A line of the run's log: above the progress bar while it is drawn, else to the log."""
        if self._progress is not None:
            self._progress.message(text)
        else:
            _log.info("%s", text)

    def _record_validation(self, step: int, metrics: Dict[str, float]) -> None:
        """Logs validation metrics and appends them to VALIDATION_HISTORY, so curves over
        training (e.g. dial2vec's alignment-uniformity trajectory) can be plotted later. A metric
        the set cannot give (None: e.g. SR's P@10 when no query has more than 10 candidates) is left out."""
        metrics = {name: value for name, value in metrics.items() if value is not None}
        self._log_scalars(step, {f"validation/{k}": v for k, v in metrics.items()})
        if self.chief:
            with open(os.path.join(self.config.model_dir, VALIDATION_HISTORY), "a", encoding="utf-8") as f:
                f.write(report_json({"step": step, **{k: float(v) for k, v in metrics.items()}}, indent=None) + "\n")
            if self.config.keep_best:
                self._keep_if_best(step, metrics)

    def _keep_if_best(self, step: int, metrics: Dict[str, float]) -> None:
        """Writes MODEL_DIR/best (config, vocabulary, method.json and the weights of `step`) when
        `metrics` beat its record; replaced whole, so it is never half-written."""
        metric, better = self.config.keep_best
        if metric not in metrics:
            raise ValueError(f"validation reports {sorted(metrics)}, not {metric!r} to keep the best by")
        value = float(metrics[metric])
        if not math.isfinite(value):
            _log.warning("step %d: validation %s is %s, so these weights cannot be kept as the best", step,
                         metric, value)
            return
        best = read_best(self.config.model_dir)
        if best is not None and not (value > best["value"] if better == "max" else value < best["value"]):
            return
        self._check_finite(step)
        with checkpoint_directory(os.path.join(self.config.model_dir, BEST_DIR), self.method.encoder,
                                  self.tokenizer, number=step, replace=True, model=self.method) as staging:
            record = os.path.join(self.config.model_dir, METHOD_CONFIG)
            if os.path.isfile(record):
                shutil.copy(record, staging)
            with open(os.path.join(staging, BEST_RECORD), "w", encoding="utf-8") as f:
                json.dump({"step": step, "metric": metric, "value": value, "better": better}, f)
        self._say(f"step {step}: best {metric} so far ({value:.4f}), kept in {BEST_DIR}")

    def _forget_best_after(self, step: int) -> None:
        """Drops a best kept after `step`: a restart trains those steps again."""
        best = read_best(self.config.model_dir)
        if best is not None and best["step"] > step:
            shutil.rmtree(os.path.join(self.config.model_dir, BEST_DIR))

    def _forget_validations_after(self, step: int) -> None:
        """Drops the validations of steps a restart will run again, so the history stays one
        line per step."""
        path = os.path.join(self.config.model_dir, VALIDATION_HISTORY)
        if not os.path.isfile(path):
            return
        with open(path, encoding="utf-8") as f:
            kept = [line for line in f if line.strip() and json.loads(line)["step"] <= step]
        with atomic_open(path) as f:
            f.writelines(kept)

    def _save(self) -> None:
        """Saves `ckpt-STEP` unless this step is already saved (every worker must call it); weights
        or optimizer slots that are not finite are never saved. A save that fails (a full disk)
        removes the `ckpt-STEP_temp` shards it staged, which would otherwise hold the space until
        a later run, and is refused naming the checkpoint rather than a staged shard."""
        step = int(self.step.numpy())
        latest = self.manager.latest_checkpoint
        if step > 0 and (latest is None or not latest.endswith(f"ckpt-{step}")):
            self._check_finite(step)
            try:
                self.manager.save(checkpoint_number=step)
            except Exception as e:  # pylint: disable=broad-except
                remove_staging_leftovers(self._checkpoint_dir)
                unwritable = output_error_of(e)
                if unwritable is None:
                    raise
                raise write_error(os.path.join(self._checkpoint_dir, f"ckpt-{step}"), unwritable) from None

    def _check_finite(self, step: int) -> None:
        """NonFiniteError when a float variable of the model or its optimizers holds NaN or an
        infinity (a finite loss can come with a non-finite update)."""
        variables = list(self.method.variables) + [v for o in self.optimizers.values() for v in o.variables]
        bad = sorted({v.name for v in variables
                      if v.dtype.is_floating and not bool(tf.reduce_all(tf.math.is_finite(v)))})
        if bad:
            raise self._non_finite(step, f"{len(bad)} variables hold NaN or infinite values ({', '.join(bad[:3])}"
                                         + (", ..." if len(bad) > 3 else "") + ")")

    def _non_finite(self, step: int, what: str) -> NonFiniteError:
        latest = self.manager.latest_checkpoint
        return NonFiniteError(
            f"step {step}: {what}; training stopped without saving this step. "
            + (f"The last good checkpoint is {latest}" if latest else "No checkpoint was saved before it")
            + " (a lower --learning_rate, or a look at the data, may help)")

    def _clean_worker_dir(self) -> None:
        if not self.chief and os.path.isdir(self._checkpoint_dir):
            shutil.rmtree(self._checkpoint_dir, ignore_errors=True)


class RunningMeans:
    """The mean of each scalar (loss, the method's metrics) over the last `window` steps, shown
    in the progress line."""

    def __init__(self, window: int):
        self.window = window
        self.values: Dict[str, collections.deque] = {}

    def add(self, scalars: Dict[str, float]) -> None:
        for name, value in scalars.items():
            self.values.setdefault(name, collections.deque(maxlen=self.window)).append(value)

    def describe(self) -> str:
        steps = max((len(v) for v in self.values.values()), default=0)
        means = ", ".join(f"{name} {sum(v) / len(v):.4f}" for name, v in self.values.items())
        return f"last {steps} steps: {means}" if steps > 1 else means


def read_best(model_dir: str) -> Optional[Dict]:
    """The BEST_RECORD of `model_dir`'s best weights, or None when none is kept."""
    path = os.path.join(model_dir, BEST_DIR, BEST_RECORD)
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def remove_staging_leftovers(model_dir: str) -> None:
    """Deletes the `ckpt-N_temp` directories a save killed midway leaves (TensorFlow writes a
    checkpoint's shards there before merging them into `ckpt-N.*`)."""
    for path in glob.glob(os.path.join(model_dir, "ckpt-*_temp")):
        if os.path.isdir(path):
            _log.info("removing %s, left by an interrupted checkpoint save", path)
            shutil.rmtree(path, ignore_errors=True)


def forget_checkpoints(model_dir: str, recorded, damaged) -> None:
    """Drops `damaged` from the directory's checkpoint record and renames their files `*.damaged`,
    so the run saves those steps afresh and the files stay for a look."""
    kept = [os.path.basename(path) for path in recorded if path not in damaged]
    with atomic_open(os.path.join(model_dir, "checkpoint")) as f:  # CheckpointState, text format
        f.write(f'model_checkpoint_path: "{kept[-1]}"\n')
        f.writelines(f'all_model_checkpoint_paths: "{name}"\n' for name in kept)
    for path in damaged:
        for name in glob.glob(glob.escape(path) + ".*"):
            os.replace(name, name + ".damaged")


@contextlib.contextmanager
def terminate_as_interrupt():
    """SIGTERM raises KeyboardInterrupt in the block, as Ctrl-C does, so a run stopped by it saves
    and says so (a process left to SIGTERM's default action ends with status 143 and no line)."""
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _raise_interrupt(signum, frame):
    del signum, frame
    raise KeyboardInterrupt
