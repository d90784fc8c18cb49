"""Self-describing model directories: what a training run was, written beside its checkpoints.

Training writes `method.json` (like sentence-transformers' `modules.json`): the method and its
resolved options, the example builder and its parameters, the pre-processing (merged turns,
minimum turns, max length, packing separator, casing, special-token mapping), the encoder's
start and options, the training settings, and per inference kind the settings inference must
repeat. `load_method(DIR)` rebuilds the trained model from it, heads included, and
`evaluate`, `export` and `encode` read their settings from it (`tfdialemb.inference.settings`).
"""
import dataclasses
import functools
import gc
import json
import logging
import os
from typing import Any, Dict, List, Mapping, Optional, Tuple

from tfdialemb.files import atomic_open
from tfdialemb.inference.settings import KIND_SETTINGS
from tfdialemb.methods.spec import HEAD_KINDS, MethodSpec, all_specs, get_method

METHOD_CONFIG = "method.json"
FORMAT_VERSION = 1
COMPARED_ON_RESUME = ("method", "params", "builder", "preprocessing", "encoder_options")
"""What a resumed run must share with the run that wrote the directory; training settings
(steps, learning rate, ...) may change between runs."""


def method_config(spec: MethodSpec, params: Mapping[str, Any], manifest: Mapping[str, Any], tokenizer,
                  encoder_options: Mapping[str, Any], training: Mapping[str, Any]) -> Dict[str, Any]:
    """The `method.json` of a run of `spec` on the build described by `manifest`."""
    preprocessing = {
        "merge_consecutive_turns": manifest["merge_consecutive_turns"],
        "min_turns": manifest["min_turns"],
        "max_length": manifest["max_length"],
        "dialogue_separator": manifest.get("dialogue_separator", "[SEP]"),
        "lower_case": tokenizer.lower_case,
        "special_tokens": dict(tokenizer.special_tokens),
    }
    declared = spec.inference_settings(params)
    inference = {}
    for kind in spec.offers:
        settings = {"max_length": manifest["max_length"]}
        if "merge_consecutive_turns" in KIND_SETTINGS[kind]:
            settings["merge_consecutive_turns"] = manifest["merge_consecutive_turns"]
        settings.update(declared.get(kind, {}))
        inference[kind] = settings
    return {
        "format_version": FORMAT_VERSION,
        "method": spec.name,
        "paper": spec.paper,
        "params": dict(params),
        "builder": manifest["builder"],
        "preprocessing": preprocessing,
        "encoder_options": dict(encoder_options),
        "training": dict(training),
        "inference": inference,
    }


def read_method_config(directory: str) -> Optional[Dict[str, Any]]:
    """The `method.json` of `directory`, or None when it has none (any other checkpoint)."""
    path = os.path.join(directory, METHOD_CONFIG)
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            config = json.load(f)
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: unreadable ({e})") from None
    if not isinstance(config, dict) or config.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{path}: format_version {config.get('format_version') if isinstance(config, dict) else None} "
                         f"is not {FORMAT_VERSION}")
    return config


def trained_method_name(directory: str) -> Optional[str]:
    """The method a tfdialemb model directory was trained with, or None."""
    config = read_method_config(directory) if directory and os.path.isdir(directory) else None
    return config["method"] if config else None


def write_method_config(directory: str, config: Mapping[str, Any]) -> None:
    """Writes `config` as DIR/method.json; a directory written by another run must describe the
    same method, options and build, or a ValueError names what differs."""
    existing = read_method_config(directory)
    if existing is not None:
        differ = setting_differences({key: existing.get(key) for key in COMPARED_ON_RESUME},
                                     {key: config.get(key) for key in COMPARED_ON_RESUME})
        if differ:
            raise ValueError(f"{directory}: holds a model trained otherwise ({'; '.join(differ)}); use a new "
                             "--model_dir, or the same flags to resume")
    with atomic_open(os.path.join(directory, METHOD_CONFIG)) as f:
        f.write(json.dumps(config, indent=2, ensure_ascii=False) + "\n")


def setting_differences(there: Mapping[str, Any], now: Mapping[str, Any], prefix: str = "") -> List[str]:
    """"name: A there, B now" for each setting that differs, nested dictionaries compared key by
    key (`params.temperature: 0.1 there, 0.2 now`), so a refused resume names only what changed."""
    differences = []
    for key in list(there) + [k for k in now if k not in there]:
        name = f"{prefix}{key}"
        before, after = there.get(key), now.get(key)
        if isinstance(before, Mapping) and isinstance(after, Mapping):
            differences.extend(setting_differences(before, after, f"{name}."))
        elif before != after:
            differences.append(f"{name}: {before} there, {after} now")
    return differences


@dataclasses.dataclass
class TrainedMethod:
    """A trained model rebuilt from its directory: the method's Keras model, heads included."""

    spec: MethodSpec
    config: Dict[str, Any]
    model: Any
    tokenizer: Any
    directory: str
    checkpoint: str
    """The `ckpt-N` prefix the weights were read from."""

    @property
    def encoder(self):
        return self.model.encoder

    @property
    def params(self) -> Dict[str, Any]:
        return self.spec.resolve(self.config["params"])

    def recorded(self, kind: str) -> Dict[str, Any]:
        return recorded_settings(self.config, kind)


def recorded_settings(config: Mapping[str, Any], kind: str) -> Dict[str, Any]:
    """The settings `config` records for inference `kind`: the kind's own when the method offers
    it, else only the pre-processing every dialogue kind repeats."""
    if kind in config["inference"]:
        return dict(config["inference"][kind])
    if "merge_consecutive_turns" not in KIND_SETTINGS[kind]:
        return {}
    return {"merge_consecutive_turns": config["preprocessing"]["merge_consecutive_turns"]}


def load_method(directory: str) -> TrainedMethod:
    """Rebuilds the model trained in `directory` (its `method.json` and latest checkpoint)."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    from tfdialemb.encoders.checkpoint import load_own_encoder  # pylint: disable=import-outside-toplevel
    from tfdialemb.encoders.weights import DAMAGED_CHECKPOINT_ERRORS, CheckpointError  # pylint: disable=import-outside-toplevel

    directory = os.fspath(directory)
    config = read_method_config(directory)
    if config is None:
        raise ValueError(f"{directory}: has no {METHOD_CONFIG}, so it is not a model directory written by "
                         "`python -m tfdialemb.train` (load its encoder with --init_checkpoint)")
    spec = get_method(config["method"])
    encoder, tokenizer, path = load_own_encoder(directory, restore=False)
    model = spec.make_model(encoder, spec.resolve(config["params"]))
    try:
        tf.train.Checkpoint(model=model).read(path).expect_partial().assert_existing_objects_matched()
    except DAMAGED_CHECKPOINT_ERRORS as e:
        raise CheckpointError(f"{path}: damaged ({str(e).splitlines()[0]}); copy the directory again") from None
    except (AssertionError, ValueError) as e:
        raise CheckpointError(f"{path}: does not hold the {spec.name} model described by {METHOD_CONFIG} "
                              f"({e})") from None
    return TrainedMethod(spec, config, model, tokenizer, directory, path)


class ModelSource:
    """A checkpoint directory opened for inference: its record now (cheap, so a contradicting
    flag fails before any weights are read), its model on first use.

    A method directory (with `method.json`) loads through `load_method`, heads included; any
    other checkpoint (an untrained BERT, a directory of `save_pretrained`) through
    `load_pretrained`, with nothing recorded. Used as a context manager, the loaded model is
    released when the block ends, so sources used one after another hold one model at a time.
    """

    def __init__(self, directory: str):
        self.directory = os.fspath(directory)
        self.config = read_method_config(self.directory) if os.path.isdir(self.directory) else None

    @property
    def method(self) -> Optional[str]:
        return self.config["method"] if self.config else None

    def recorded(self, kind: str) -> Optional[Dict[str, Any]]:
        return recorded_settings(self.config, kind) if self.config else None

    def settings(self, kind: str, given: Mapping[str, Any]) -> Dict[str, Any]:
        """The `kind` settings from the flags given, the record and the defaults; warnings for
        overridden records go to the log."""
        from tfdialemb.inference.settings import resolve  # pylint: disable=import-outside-toplevel

        if kind in HEAD_KINDS and (self.method is None or kind not in get_method(self.method).offers):
            offering = [spec.name for spec in all_specs() if kind in spec.offers]
            what = f"a {self.method} model" if self.method else "not a trained model directory"
            raise ValueError(f"{self.directory}: {what}; {kind} scores need a trained head: give the "
                             f"--model_dir of a model trained with --method={' or '.join(offering)}")
        settings, warnings = resolve(kind, self.recorded(kind), given,
                                     os.path.join(self.directory, METHOD_CONFIG))
        for warning in warnings:
            logging.getLogger(__name__).warning("%s", warning)
        return settings

    def __enter__(self) -> "ModelSource":
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    def release(self) -> None:
        """Drops the loaded model (loaded again on next use)."""
        for name in ("trained", "pretrained"):
            self.__dict__.pop(name, None)
        gc.collect()

    @functools.cached_property
    def trained(self) -> Optional[TrainedMethod]:
        return load_method(self.directory) if self.config else None

    @functools.cached_property
    def pretrained(self):
        """The encoder and tokenizer (`tfdialemb.encoders.Pretrained`)."""
        from tfdialemb.encoders import Pretrained, load_pretrained  # pylint: disable=import-outside-toplevel

        if self.trained is None:
            return load_pretrained(self.directory)
        return Pretrained(self.trained.encoder, self.trained.tokenizer, "tfdialemb", self.directory)


def inference_parts(pretrained, kind: str, given: Mapping[str, Any]) -> Tuple[Any, Any, Dict[str, Any]]:
    """(encoder, tokenizer, settings of inference `kind`) for the embedders' `from_pretrained`: from
    a directory (`str` or path: a trained model's record, or any checkpoint `load_pretrained`
    reads) or a loaded `Pretrained` (nothing recorded), with the same `given` settings
    (`tfdialemb.inference.settings` names; None: not given) either way. A TypeError names a
    setting `kind` does not read."""
    from tfdialemb.inference.settings import resolve  # pylint: disable=import-outside-toplevel

    unknown = sorted(set(given) - set(KIND_SETTINGS[kind]))
    if unknown:
        hint = "; the dialogue's pooling is dialogue_pooling" if kind == "dialogue" and "pooling" in unknown else ""
        raise TypeError(f"the {kind} settings are {', '.join(KIND_SETTINGS[kind])}, not "
                        f"{', '.join(unknown)}{hint}")
    if isinstance(pretrained, (str, os.PathLike)):
        source = ModelSource(pretrained)
        return source.pretrained.encoder, source.pretrained.tokenizer, source.settings(kind, given)
    settings, _ = resolve(kind, None, given, "the given Pretrained")
    return pretrained.encoder, pretrained.tokenizer, settings
