"""A training run's settings, resolved once before it starts: the flags as given, filled from the
method's spec (its paper's values, the optimizer settings its options fix) and from the library's
defaults, then fitted to the encoder the run starts from and checked against the model directory's
record of an earlier run's encoder. Flags missing, at odds or unusable are refused here, before
any work, with a ValueError (or an OSError naming the file); the run reads only the `RunSettings`.

What the method's options decide for the run (the example builder's parameters, the encoder's
options, the settings inference must repeat) is asked of the spec here, once, and a model
directory's `method.json` is read and compared here too: a resume with other options is refused
before its data is built."""
import dataclasses
import os
from typing import Any, Dict, List, Mapping, Optional, Tuple

from tfdialemb.core import precision
from tfdialemb.core.inputs import check_input_file
from tfdialemb.encoders.config import usable_max_length
from tfdialemb.core.files import check_writable
from tfdialemb.method_record import recorded_run, refuse_other_run, setting_differences
from tfdialemb.methods.spec import MethodConfig, MethodSpec, all_specs, get_method
from tfdialemb.training.flags import SELECTOR

TRAINING_DEFAULTS = {"batch_size": 32, "learning_rate": 5e-5, "freeze_layers": 0, "max_length": 128,
                     "num_epochs": None, "weight_decay": 0.0, "warmup_fraction": 0.0,
                     "lr_schedule": "constant"}
"""Values of the shared flags a method's `defaults` leaves unset."""
OPTIMIZER_FLAGS = {"learning_rate": "learning_rate", "lr_schedule": "schedule", "warmup_fraction": "warmup_steps",
                   "weight_decay": "weight_decay"}
"""The shared flags that set an OptimizerConfig field, which a method's `optimizer_settings` may fix;
given with another value than the fixed one, they are refused."""
ENCODER_SHAPE = ("vocab_size", "hidden_size", "num_layers", "num_attention_heads", "intermediate_size",
                 "max_position_embeddings", "type_vocab_size", "embedding_size")
"""The encoder config fields that set the shapes of its weights and come from --init_checkpoint
alone (role and turn embeddings are the method's encoder options, compared with method.json)."""
RECORDED_TRAINING = ("train_file", "init_checkpoint", "max_steps", "num_epochs", "batch_size", "learning_rate",
                     "lr_schedule", "warmup_fraction", "weight_decay", "freeze_layers", "seed", "strategy",
                     "mixed_precision", "jit_compile", "validate_mixed_precision", "bucket_by_length")
"""The training settings written to method.json (informative: a resumed run may change them)."""


@dataclasses.dataclass(frozen=True)
class RunSettings:
    """Everything a training run uses, as it uses it: the method and its options, then one field
    per shared training flag with its resolved value."""
    spec: MethodSpec
    params: MethodConfig
    fixed_optimizer: Mapping[str, Any]
    """The OptimizerConfig fields the method's options fix (`MethodSpec.optimizer_settings`)."""
    builder_params: Mapping[str, Any]
    """The example builder's parameters (`MethodSpec.builder_params`)."""
    build_options: Mapping[str, Any]
    """The method's further `BuildOptions` fields (`MethodSpec.build_options`)."""
    encoder_options: Mapping[str, Any]
    """The options the encoder is loaded with (`MethodSpec.encoder_options`)."""
    declared_inference: Mapping[str, Mapping[str, Any]]
    """{inference kind: settings} inference repeats from training (`MethodSpec.inference_settings`)."""
    unused_options: Tuple[str, ...]
    """The options `params` leave without effect, not shown in the header (`MethodSpec.unused_options`)."""
    train_file: str
    model_dir: str
    init_checkpoint: str
    max_steps: Optional[int]
    num_epochs: Optional[float]
    batch_size: int
    learning_rate: float
    lr_schedule: str
    warmup_fraction: float
    weight_decay: float
    freeze_layers: Optional[int]
    """None until `fitted_to_encoder`, when --freeze_layers is not given: the method's value
    depends on the encoder's depth."""
    max_length: int
    merge_consecutive_turns: bool
    min_turns: int
    pool_dialogues: int
    seed: int
    checkpoint_every: int
    log_every: int
    num_shards: int
    bucket_by_length: bool
    validate_task: str
    validate_label_key: str
    validate_file: Optional[str]
    validate_every: Optional[int]
    validate_mixed_precision: str
    strategy: str
    devices: Optional[List[str]]
    collective_timeout: int
    mixed_precision: str
    jit_compile: bool
    freezing_note: Optional[str] = None
    """Says how the method's --freeze_layers was adapted to the encoder's depth, when it was."""
    recorded: Optional[Mapping[str, Any]] = None
    """The model directory's `method.json` when an earlier run wrote one, its options completed
    with their defaults (`MethodSpec.from_record`): what this run must share to resume there."""

    @classmethod
    def from_flags(cls, spec: MethodSpec, params: MethodConfig, flag_values) -> "RunSettings":
        """The flags of `flag_values` for a run of `spec` with `params`, unset shared ones filled
        (`shared_settings`); nothing checked yet."""
        from_spec = {"fixed_optimizer": spec.optimizer_settings(params), "builder_params": spec.builder_params(params),
                     "build_options": spec.build_options(params), "encoder_options": spec.encoder_options(params),
                     "declared_inference": spec.inference_settings(params),
                     "unused_options": tuple(spec.unused_options(params))}
        names = [field.name for field in dataclasses.fields(cls)
                 if field.name not in ("spec", "params", "freezing_note", "recorded", *from_spec)]
        values = {name: getattr(flag_values, name) for name in names}
        values.update(shared_settings(spec, flag_values))
        return cls(spec=spec, params=params, **from_spec, **values)

    @property
    def validates(self) -> bool:
        """Whether the run validates: a --validate_file and a --validate_every other than 0."""
        return bool(self.validate_file and self.validate_every)

    def training_record(self) -> Dict[str, Any]:
        """The training settings method.json records (RECORDED_TRAINING)."""
        return {name: getattr(self, name) for name in RECORDED_TRAINING}


def chosen_method(command: str, flag_values) -> Tuple[MethodSpec, MethodConfig]:
    """The spec the command's selector flag names and its options as given; a ValueError for a
    missing selector, another method's options, or an optimizer flag the options fix to another
    value."""
    selector = SELECTOR[command]
    if flag_values[selector].value is None:
        names = [spec.name for spec in all_specs(command)]
        raise ValueError(f"missing --{selector} (one of {', '.join(names)})")
    spec = get_method(flag_values[selector].value)
    stray = stray_options(spec, command, flag_values)
    if stray:
        raise ValueError(f"{', '.join('--' + n for n in stray)} do(es) not apply to --{selector}={spec.name}")
    params = spec.resolve({o.name: flag_values[o.name].value for o in spec.options if flag_values[o.name].present})
    fixed = spec.optimizer_settings(params)
    ignored = [name for name, field in OPTIMIZER_FLAGS.items()
               if field in fixed and flag_values[name].present and flag_values[name].value != fixed[field]]
    if ignored:
        raise ValueError(f"{', '.join('--' + n for n in ignored)} do(es) not apply to --{selector}={spec.name} with "
                         f"these options, whose optimizer fixes {', '.join(f'{k} {v}' for k, v in fixed.items())}")
    return spec, params


def stray_options(spec: MethodSpec, command: str, flag_values) -> List[str]:
    """Options of the command's other methods given in `flag_values`."""
    own = {o.name for o in spec.options}
    return sorted({o.name for s in all_specs(command) for o in s.options
                   if o.name not in own and flag_values[o.name].present})


def shared_settings(spec: MethodSpec, flag_values) -> Dict[str, Any]:
    """The shared training flags of `flag_values` as a run of `spec` uses them: given, else the
    method's, else the library's. --freeze_layers stays None when not given: `fitted_freeze_layers`
    fits the method's value to the encoder's depth once the encoder's config is read."""
    settings = {}
    for name, fallback in TRAINING_DEFAULTS.items():
        value = getattr(flag_values, name)
        settings[name] = (value if value is not None or name == "freeze_layers"
                          else spec.defaults.get(name, fallback))
    return settings


def resolve_run_settings(spec: MethodSpec, params: MethodConfig, flag_values) -> RunSettings:
    """The settings of a run of `spec` with `params` from `flag_values`, checked and fitted to the
    encoder of --init_checkpoint; a ValueError or OSError says what the run cannot start with."""
    settings = RunSettings.from_flags(spec, params, flag_values)
    check_given(settings)
    check_writable(settings.model_dir, directory_output=True)
    encoder_config = init_encoder_config(settings.init_checkpoint, settings.model_dir)
    settings = fitted_to_encoder(settings, encoder_config)
    recorded = recorded_run(settings.model_dir, spec.name, spec.from_record)
    if recorded is not None:
        refuse_other_run(settings.model_dir, recorded, {"method": spec.name, "params": dict(params),
                                                        "encoder_options": dict(settings.encoder_options),
                                                        "training": settings.training_record()})
    return dataclasses.replace(settings, recorded=recorded)


def check_given(settings: RunSettings) -> None:
    """Refuses flags missing or at odds with each other, and a training or validation file that
    cannot be read (before the encoder, and TensorFlow with it, is loaded)."""
    missing = [f"--{n}" for n in ("train_file", "model_dir", "init_checkpoint") if not getattr(settings, n)]
    if missing:
        raise ValueError(f"missing {', '.join(missing)}")
    if not settings.max_steps and not settings.num_epochs:
        raise ValueError("give --max_steps or --num_epochs")
    if os.path.realpath(settings.model_dir) == os.path.realpath(settings.init_checkpoint):
        raise ValueError(f"--model_dir is --init_checkpoint ({settings.model_dir}): the run's checkpoints would take "
                         "the place of the encoder it starts from; give another --model_dir")
    if settings.validate_file and settings.validate_every is None:
        raise ValueError("--validate_file needs --validate_every=N (the steps between validations; 0 trains without "
                         "validating)")
    if settings.validate_every and not settings.validate_file:
        raise ValueError(f"--validate_every={settings.validate_every} needs --validate_file; without it no "
                         "validation runs")
    if not os.path.isdir(settings.train_file):  # a directory is a build, read by its manifest
        check_input_file(settings.train_file, "training file")
    if settings.validates:
        check_input_file(settings.validate_file, "validation file")


def fitted_to_encoder(settings: RunSettings, encoder_config) -> RunSettings:
    """`settings` with the max length the encoder can take, the method's --freeze_layers fitted to
    its depth (and the note saying so) and the precision policy --mixed_precision=auto stands for
    here, as the run prints and records them."""
    freeze_layers, note = fitted_freeze_layers(settings.spec, settings.freeze_layers, encoder_config.num_layers,
                                               settings.init_checkpoint)
    return dataclasses.replace(settings, max_length=usable_max_length(encoder_config, settings.max_length),
                               freeze_layers=freeze_layers, freezing_note=note,
                               mixed_precision=precision.resolve(settings.mixed_precision))


def fitted_freeze_layers(spec: MethodSpec, given: Optional[int], num_layers: int,
                         checkpoint: str) -> Tuple[int, Optional[str]]:
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
