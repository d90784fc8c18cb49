"""The method registry: one `MethodSpec` per method, found by name (Model Garden's task factory).

A spec says everything the commands need to know about a method, so `train`, `evaluate`,
`export` and `bench` dispatch through it with no code of their own per method:

  - `builder` and `builder_params`: the example builder that turns dialogues into its batches;
  - `options`: the method's own hyper-parameters, each an absl flag of `train` with the paper's
    value as default; `Switch` options pick the paper or the released code (the table of docs/methods/overview.md);
  - `defaults`: the paper's values of the shared training flags (batch size, learning rate, ...);
  - `make_model(encoder, params)`: the trainable `Method`, heads included; `params`, here and in
    every hook, is the method's typed config (`config_type`, a frozen dataclass of its options read
    as `params.temperature` or `params["temperature"]`), recorded in method.json as a dictionary;
  - `training_file`, `build_options`, `encoder_options`, `batches`, `auxiliary`, `after_build`,
    `check`, `unused_options`: the optional hooks of the shared training run;
  - `offers` and `inference_settings`: what the trained model serves (`sentence`, `dialogue`,
    `curved` (triple-encoder / CCL) scores, `selection` scores) and the choices inference must repeat from training; these are
    recorded in the model directory (`tfdialemb.method_record`) so evaluation and export read them.

A method module defines its spec and options and registers the spec with `register_method`; its
Keras model lives in `tfdialemb.methods.models.NAME`, which `make_model` imports, so the specs load
no TensorFlow. Every module of `tfdialemb.methods` is imported on first lookup, so the two new files
are all it takes.
Code outside the package registers its own spec the same way before calling the commands' `run`.
"""
import collections.abc
import dataclasses
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from tfdialemb.kind_registry import KINDS
from tfdialemb.core.options import Option, Switch
from tfdialemb.core.package_modules import import_package_modules


Params = Mapping[str, Any]


class MethodConfig(collections.abc.Mapping):
    """Base of a method's typed options (`MethodSpec.config_type`, as Model Garden's ModelConfig): a
    frozen dataclass with one field per option, read as attributes (`config.temperature`) or by
    name (`config["temperature"]`, the flag's name and the key `method.json` records)."""

    def __getitem__(self, name: str) -> Any:
        if name not in self.__dataclass_fields__:
            raise KeyError(name)
        return getattr(self, name)

    def __iter__(self):
        return iter(self.__dataclass_fields__)

    def __len__(self) -> int:
        return len(self.__dataclass_fields__)


@dataclasses.dataclass(frozen=True)
class TrainingRun:
    """The shared training settings a spec's hooks may need."""
    init_checkpoint: str
    batch_size: int
    max_length: int
    seed: int
    load_model: Optional[Callable[..., Any]] = None
    """`load_model(path, kind, given=None)`: another trained model directory opened as an inference
    kind's runtime (`tfdialemb.inference.kinds.load`), which the methods, below the runtimes, are
    handed by the command (augcl's augmentation scores utterances with one); None: the run opens none."""


class MethodSpec:
    """Base of every method's spec; subclasses set the class attributes and `make_model`."""

    name: str = ""
    paper: str = ""
    builder: str = ""
    command: str = "train"
    """The command that trains it: `train`, or `pretrain` for continued pre-training objectives."""
    options: Tuple[Option, ...] = ()
    defaults: Mapping[str, Any] = {}
    """The paper's values of shared training flags (batch_size, learning_rate, freeze_layers,
    max_length, weight_decay, warmup_fraction, lr_schedule, num_epochs)."""
    preprocessing: Mapping[str, Any] = {"merge_consecutive_turns": True, "min_turns": 2}
    """Defaults of the dialogue pre-processing applied before building examples."""
    offers: Tuple[str, ...] = ("sentence",)
    """The kinds of `tfdialemb.kind_registry.KINDS` it serves, its own first (what export and
    evaluate use when no --kind is given)."""
    bench_defaults: Mapping[str, Any] = {"batch": 16, "dialogues": 500, "max_length": 64, "steps": 5,
                                         "warmup": 1}
    """`python -m tfdialemb.bench --method=NAME` settings left unset: dialogues built, batch,
    max_length, timed steps and warm-up steps."""

    def training_file(self, train_file: str, data_dir: str, params: Params, run: TrainingRun) -> str:
        """The dialogue file the build reads, from --train_file (e.g. augcl writes the
        augmentations of a plain dialogue file into the run's `data_dir` first)."""
        del data_dir, params, run
        return train_file

    def builder_params(self, params: Params) -> Dict[str, Any]:
        """The example builder's parameters for these method parameters."""
        del params
        return {}

    def build_options(self, params: Params) -> Dict[str, Any]:
        """Further `BuildOptions` fields (e.g. the token between a packed dialogue's turns)."""
        del params
        return {}

    def encoder_options(self, params: Params) -> Dict[str, Any]:
        """Options of `load_pretrained` when the run starts (e.g. role / turn embedding tables)."""
        del params
        return {}

    def make_model(self, encoder, params: Params):
        """The trainable `tfdialemb.methods.models.base.Method` on `encoder`."""
        raise TypeError(f"{type(self).__name__} must define make_model()")

    def check(self, params: Params, run: TrainingRun) -> List[str]:
        """Warnings about a run's settings (e.g. C3L not started from a CCL model); ValueError
        for settings the method cannot use."""
        del params, run
        return []

    def batches(self, dataset, tokenizer, params: Params, run: TrainingRun):
        """The per-replica batches from the built examples (e.g. MLM draws its masks here)."""
        del tokenizer, params, run
        return dataset

    def auxiliary(self, params: Params, run: TrainingRun) -> Optional[Callable]:
        """None, or `fn(input_context, tokenizer)` returning an infinite per-replica-batched
        dataset whose keys join each main batch (e.g. CCL's NLI pairs)."""
        del params, run
        return None

    def schedule_steps(self, params: Params, examples: int, num_epochs: Optional[float]) -> Optional[int]:
        """The steps the learning-rate schedule spans when not the run's (None): e.g. a released
        run's mis-sized cycle; ValueError when `params` need what the run does not give."""
        del params, examples, num_epochs
        return None

    def optimizer_settings(self, params: Params) -> Dict[str, Any]:
        """OptimizerConfig fields that `params` fix whatever the shared flags say (e.g. a
        released variant's own schedule and clipping); printed with the run's settings."""
        del params
        return {}

    def unused_options(self, params: Params) -> Tuple[str, ...]:
        """The options that `params` leave without effect (e.g. a released variant's fixed
        temperature), which the run's header does not show."""
        del params
        return ()

    def after_build(self, model, params: Params, run: TrainingRun) -> None:
        """Runs once the model exists, before a checkpoint is restored (e.g. loads an MLM head)."""
        del model, params, run

    def inference_settings(self, params: Params) -> Dict[str, Dict[str, Any]]:
        """{inference kind: {setting: value}} that inference must repeat from training, e.g.
        {"dialogue": {"separator": "eou", "num_roles": 2}}."""
        del params
        return {}

    def bench_sequences(self, batch: Mapping, params: Params) -> List[Tuple[Any, Any]]:
        """The (ids, mask) sequences a training step on `batch` encodes, for the benchmark of a
        step against the bare encoder on the same tokens; by default every sequence feature."""
        del params
        return default_bench_sequences(batch)

    @property
    def switches(self) -> Tuple[Switch, ...]:
        return tuple(o for o in self.options if isinstance(o, Switch))

    def option(self, name: str) -> Option:
        for option in self.options:
            if option.name == name:
                return option
        raise KeyError(f"method {self.name!r} has no option {name!r}")

    def config_type(self) -> type:
        """The frozen `MethodConfig` dataclass of this spec's options (`<Name>Config`), made once
        per spec class from `options`: each field typed and defaulted as its option."""
        spec_class = type(self)
        if "_config_type" not in spec_class.__dict__:
            fields = [(o.name, o.kind, dataclasses.field(default=o.default)) for o in self.options]
            name = "".join(part.title() for part in self.name.split("_")) + "Config"
            spec_class._config_type = dataclasses.make_dataclass(name, fields, bases=(MethodConfig,), frozen=True,
                                                                 eq=False)
        return spec_class._config_type

    def resolve(self, given: Optional[Params] = None) -> MethodConfig:
        """Every option's value as this method's `config_type`: `given` where set, else the
        option's default; unknown names are refused."""
        given = dict(given or {})
        unknown = sorted(set(given) - {o.name for o in self.options})
        if unknown:
            raise ValueError(f"method {self.name!r} has no options {unknown}; it takes "
                             f"{sorted(o.name for o in self.options)}")
        return self.config_type()(**{o.name: given.get(o.name, o.default) for o in self.options})

    def from_record(self, recorded: Params) -> MethodConfig:
        """The config a model directory's `method.json` records as `params`, rebuilt as the run
        resolved it: with every option recorded, `resolve`'s refusals of flags given together do
        not apply (e.g. mge's released variant records the temperature it does not use); an
        option the record lacks takes its default, an unknown one is refused."""
        unknown = sorted(set(recorded) - {o.name for o in self.options})
        if unknown:
            raise ValueError(f"method {self.name!r} has no options {unknown}; the record was written by "
                             "another version of the method")
        return self.config_type()(**{o.name: recorded.get(o.name, o.default) for o in self.options})


def default_bench_sequences(batch: Mapping) -> List[Tuple[Any, Any]]:
    """Every `name` with a `name_mask` in `batch`, flattened to [rows, T] and without empty rows."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    sequences = []
    for name in sorted(batch):
        if name.endswith("_mask") or f"{name}_mask" not in batch:
            continue
        ids, mask = batch[name], batch[f"{name}_mask"]
        length = tf.shape(ids)[-1]
        ids, mask = tf.reshape(ids, [-1, length]), tf.reshape(mask, [-1, length])
        keep = tf.reduce_any(mask > 0, axis=-1)
        sequences.append((tf.boolean_mask(ids, keep), tf.boolean_mask(mask, keep)))
    return sequences


_SPECS: Dict[str, MethodSpec] = {}
_builtin_loaded = False


def register_method(spec_class):
    """Class decorator (or call) registering one instance of a `MethodSpec` subclass."""
    spec = spec_class() if isinstance(spec_class, type) else spec_class
    if not spec.name:
        raise ValueError(f"{type(spec).__name__} has no name")
    if spec.name in _SPECS and type(_SPECS[spec.name]) is not type(spec):
        raise ValueError(f"a method named {spec.name!r} is already registered")
    unknown = sorted(set(spec.offers) - set(KINDS))
    if unknown:
        raise ValueError(f"method {spec.name!r} offers unknown inference kinds {unknown}; "
                         f"known: {tuple(KINDS)}")
    _SPECS[spec.name] = spec
    return spec_class


def unregister_method(name: str) -> None:
    """Removes a registered spec (for specs defined by tests)."""
    _SPECS.pop(name, None)


def get_method(name: str) -> MethodSpec:
    """The spec registered as `name`; a ValueError lists the known ones."""
    _load_builtin()
    if name not in _SPECS:
        raise ValueError(f"unknown method {name!r}; known: {', '.join(sorted(_SPECS))} (a method defined "
                         "outside tfdialemb must be registered before the command runs)")
    return _SPECS[name]


def method_names(command: Optional[str] = None) -> List[str]:
    """Registered method names, those trained by `command` only when given."""
    _load_builtin()
    return sorted(n for n, s in _SPECS.items() if command is None or s.command == command)


def all_specs(command: Optional[str] = None) -> List[MethodSpec]:
    return [_SPECS[name] for name in method_names(command)]


def _load_builtin() -> None:
    """Imports every module of tfdialemb.methods; importing a method module registers its spec."""
    global _builtin_loaded  # pylint: disable=global-statement
    if _builtin_loaded:
        return
    _builtin_loaded = True
    import_package_modules("tfdialemb.methods")
