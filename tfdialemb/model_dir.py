"""Trained models rebuilt from their directories, and directories opened for inference.

A model directory describes its run (`tfdialemb.method_record`, `method.json`): `load_method(DIR)`
rebuilds the trained model from it, heads included, and `ModelSource` gives `evaluate`, `export`,
`encode` and the embedders' `from_pretrained` the settings it records (`tfdialemb.kind_registry`)
and the model they need.
"""
import dataclasses
import functools
import gc
import logging
import os
from typing import Any, Dict, Mapping, Optional, Tuple

from tfdialemb.encoders.errors import CheckpointError
from tfdialemb.kind_registry import KINDS, resolve
from tfdialemb.method_record import METHOD_CONFIG, read_method_config, recorded_settings
from tfdialemb.methods.spec import MethodConfig, MethodSpec, all_specs, get_method


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
    def params(self) -> MethodConfig:
        return self.spec.from_record(self.config["params"])

    def recorded(self, kind: str) -> Dict[str, Any]:
        return recorded_settings(self.config, kind)


def load_method(directory: str) -> TrainedMethod:
    """Rebuilds the model trained in `directory` (its `method.json` and latest checkpoint)."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    from tfdialemb.encoders.checkpoint import load_own_encoder  # pylint: disable=import-outside-toplevel
    from tfdialemb.encoders.weights import DAMAGED_CHECKPOINT_ERRORS  # pylint: disable=import-outside-toplevel

    directory = os.fspath(directory)
    config = read_method_config(directory)
    if config is None:
        raise ValueError(f"{directory}: has no {METHOD_CONFIG}, so it is not a model directory written by "
                         "`python -m tfdialemb.train` (load its encoder with --init_checkpoint)")
    if not os.path.isfile(os.path.join(directory, "checkpoint")):
        raise CheckpointError(f"{directory}: its {config['method']} training run has saved no checkpoint yet; "
                              "rerun its training command to train it")
    spec = get_method(config["method"])
    encoder, tokenizer, path = load_own_encoder(directory, restore=False)
    model = spec.make_model(encoder, spec.from_record(config["params"]))
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
        if KINDS[kind].needs_head and (self.method is None or kind not in get_method(self.method).offers):
            offering = [spec.name for spec in all_specs() if kind in spec.offers]
            what = f"a {self.method} model" if self.method else "not a trained model directory"
            raise ValueError(f"{self.directory}: {what}; {kind} scores need a trained head: give the "
                             f"--model_dir of a model trained with --method={' or '.join(offering)}")
        if kind == "sentence" and self.method is not None and kind not in get_method(self.method).offers:
            # Its encoder learned from other inputs (dial2vec: whole dialogues with role and turn
            # embeddings; fgc: context-response pairs): `export --kind=sentence` refuses it too.
            raise ValueError(f"{self.directory}: a {self.method} model serves "
                             f"{' and '.join(get_method(self.method).offers)}, not sentence embeddings")
        settings, warnings = resolve(kind, self.recorded(kind), given,
                                     os.path.join(self.directory, METHOD_CONFIG))
        for warning in warnings:
            logging.getLogger(__name__).warning("%s", warning)
        return settings

    def serving_parts(self, kind: str) -> Tuple[Any, Any]:
        """(model, tokenizer) a `kind` runtime is built from: the trained method, heads included,
        for a kind that needs a head, else the encoder."""
        if KINDS[kind].needs_head:
            return self.trained.model, self.trained.tokenizer
        return self.pretrained.encoder, self.pretrained.tokenizer

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
        from tfdialemb.encoders.checkpoint import Pretrained, load_pretrained  # pylint: disable=import-outside-toplevel

        if self.trained is None:
            return load_pretrained(self.directory)
        return Pretrained(self.trained.encoder, self.trained.tokenizer, "tfdialemb", self.directory)


def inference_parts(pretrained, kind: str, given: Mapping[str, Any]) -> Tuple[Any, Any, Dict[str, Any]]:
    """(encoder, tokenizer, settings of inference `kind`) for the embedders' `from_pretrained`: from
    a directory (`str` or path: a trained model's record, or any checkpoint `load_pretrained`
    reads) or a loaded `Pretrained` (nothing recorded), with the same `given` settings
    (`tfdialemb.inference_settings` names; None: not given) either way. A TypeError names a
    setting `kind` does not read."""
    unknown = sorted(set(given) - set(KINDS[kind].settings))
    if unknown:
        hint = "; the dialogue's pooling is dialogue_pooling" if kind == "dialogue" and "pooling" in unknown else ""
        raise TypeError(f"the {kind} settings are {', '.join(KINDS[kind].settings)}, not "
                        f"{', '.join(unknown)}{hint}")
    if isinstance(pretrained, (str, os.PathLike)):
        source = ModelSource(pretrained)
        return source.pretrained.encoder, source.pretrained.tokenizer, source.settings(kind, given)
    settings, _ = resolve(kind, None, given, "the given Pretrained")
    return pretrained.encoder, pretrained.tokenizer, settings
