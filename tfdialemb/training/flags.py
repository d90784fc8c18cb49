"""The flags of the training commands, defined once: `python -m tfdialemb.train` and `python -m
tfdialemb.pretrain` differ only in the methods they offer (`MethodSpec.command`). What a run makes
of them is `tfdialemb.training.settings`."""
import sys

from absl import flags

from tfdialemb.core import distribute, precision

from tfdialemb.core import options
from tfdialemb.eval.evaluator import validation_tasks
from tfdialemb.inference_settings import MAX_LENGTH, MERGE_TURNS, MIN_TURNS, POOL_DIALOGUES
from tfdialemb.methods.spec import all_specs
from tfdialemb.core.options import define_all

SELECTOR = {"train": "method", "pretrain": "objective"}
"""The flag that names the spec, per command."""
SELECTOR_DEFAULTS = {"train": None, "pretrain": "mlm"}
"""`train` needs --method; `pretrain` defaults to DialogueCSE's continued MLM pre-training, what
`bash run_pretrain.sh jddc` runs."""


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
