"""The operations of an augmentation set, built from the models named on the command line.

Every model the set needs is checked (given, and a directory) before anything is loaded, and all
that is missing is named in one error with what it is and where it comes from. The fill-mask and
translation models are loaded only when their operations are built: they pull in Model Garden and
transformers, which a set without them never loads.

The similarity of crop and shuffle is a trained model, which augmentation (below the methods and
the runtimes) cannot open itself: the caller passes `load_model(path, kind, given=None)`, a model
directory opened as the runtime of an inference kind (`tfdialemb.inference.kinds.load`; the
augment command's, or the training run's for augcl).
"""
import dataclasses
import os
from typing import Any, Callable, List, Mapping, Optional, Tuple

from tfdialemb.augment.back_translation import BackTranslation
from tfdialemb.augment.base import Augmentation, Chain
from tfdialemb.augment.crop import StageCrop
from tfdialemb.augment.presets import Preset
from tfdialemb.augment.shuffle import StageShuffle
from tfdialemb.augment.token_insertion import TokenInsertion
from tfdialemb.augment.token_replacement import TokenReplacement
from tfdialemb.augment.similarity_sources import (
    COSINE,
    READING,
    RELEASED_PROJECTION_SIZE,
    SentenceEncoderSimilarity,
    UtteranceSimilarity,
)
from tfdialemb.core.options import PAPER

MODEL_FLAGS = {
    "fill_mask_model": "a checkpoint with a masked-LM head (a Hugging Face or Google TF1 BERT with its MLM "
                       "head, or a model written by python -m tfdialemb.pretrain)",
    "translation_models": "two MarianMT (OPUS-MT) directories, source->pivot and pivot->source, e.g. "
                          "opus-mt-en-ru,opus-mt-ru-en saved with transformers' save_pretrained",
    "context_response_model": "the auxiliary context-response model, trained with "
                              "python -m tfdialemb.train --method=context_response",
    "sentence_encoder": "a sentence encoder checkpoint load_pretrained reads (the -dse sets: "
                        "aws-ai/dse-bert-base)",
}
"""The model flags, and what each names (for the error that finds one missing)."""
TRANSLATION_MODEL_COUNT = 2
SIMILARITY_FLAGS = {"context_response": "context_response_model", "sentence_encoder": "sentence_encoder"}
"""Which model flag provides each similarity source of `presets.SIMILARITY_SOURCES`."""
OPERATIONS = {cls.name: cls for cls in (TokenInsertion, TokenReplacement, BackTranslation, StageCrop, StageShuffle)}
"""Operation name -> its class, whose `needs` names what its first constructor argument is: a model
flag, or the shared `similarity`; a model-backed operation loads its model (and TensorFlow) when
made, so missing models are named first."""


def required_model_flags(preset: Preset) -> List[str]:
    """The model flags `preset` needs, in the order of its operations."""
    needed = []
    for operation in preset.operations:
        need = OPERATIONS[operation].needs[0]
        needed.append(SIMILARITY_FLAGS[preset.similarity] if need == "similarity" else need)
    return list(dict.fromkeys(needed))


def check_models(preset: Preset, models: Mapping[str, Any]) -> None:
    """ValueError naming every model flag of `preset` that is missing or not a directory, and a
    similarity model given to a set that scores stages with the other one."""
    problems = []
    for flag in required_model_flags(preset):
        value = models.get(flag)
        paths = [p for p in value if p] if isinstance(value, (list, tuple)) else [value] if value else []
        if not paths:
            problems.append(f"--{flag} is missing: {MODEL_FLAGS[flag]}")
            continue
        if flag == "translation_models" and len(paths) != TRANSLATION_MODEL_COUNT:
            problems.append(f"--{flag} needs {TRANSLATION_MODEL_COUNT} directories, got {len(paths)}: "
                            f"{MODEL_FLAGS[flag]}")
        problems.extend(f"--{flag}={path}: no such directory ({MODEL_FLAGS[flag]})"
                        for path in paths if not os.path.isdir(path))
    if preset.similarity is not None:
        for source, flag in SIMILARITY_FLAGS.items():
            if source != preset.similarity and models.get(flag):
                problems.append(f"--{flag} is not used by --set={preset.name}, which scores stages with "
                                f"--{SIMILARITY_FLAGS[preset.similarity]}; "
                                + ("pass the -dse set (e.g. a-l-m-dse) to use a sentence encoder"
                                   if source == "sentence_encoder" else "drop it"))
    if problems:
        raise ValueError(f"--set={preset.name} ({', '.join(preset.operations)}): " + "; ".join(problems))


@dataclasses.dataclass
class OperationSet:
    """The built operations of a set, and the similarity they share (None without crop/shuffle)."""

    operations: Tuple[Augmentation, ...]
    similarity: Optional[UtteranceSimilarity] = None

    @property
    def names(self) -> Tuple[str, ...]:
        return tuple(op.name for op in self.operations)

    def start_batch(self) -> None:
        """Forgets the embeddings kept for the previous batch (bounded memory, and each batch's
        results a function of that batch alone)."""
        if self.similarity is not None:
            self.similarity.clear()

    def set_seed(self, seed: int) -> None:
        """Reseeds every operation (chained ones too) for the next view."""
        pending = list(self.operations)
        while pending:
            operation = pending.pop()
            operation.seed = seed
            if isinstance(operation, Chain):
                pending.extend(operation.operations)


def load_similarity(source: str, path: str, load_model: Callable, *, sentence_encoder_context: int = 1,
                    sentence_encoder_similarity: str = COSINE, batch_size: int = 64,
                    context_response_reading: str = PAPER) -> UtteranceSimilarity:
    """The similarity of `source` (one of SIMILARITY_FLAGS) read from `path` with `load_model`;
    ValueError when the `released` reading meets a model the released code could not have read.

    The context-response model is the one trained with --method=context_response; a sentence
    encoder is mean-pooled as the released mySentenceTransformer, whatever its checkpoint recorded."""
    if source == "context_response":
        model = load_model(path, "context_response")
        if context_response_reading != PAPER and model.width != RELEASED_PROJECTION_SIZE:
            raise ValueError(f"--{READING.name}={context_response_reading} reads the released model of projection "
                             f"{RELEASED_PROJECTION_SIZE}; {path} projects to {model.width} (train it with "
                             f"--projection_size={RELEASED_PROJECTION_SIZE})")
        return UtteranceSimilarity(model, reading=context_response_reading)
    if context_response_reading != PAPER:
        raise ValueError(f"--{READING.name} reads the context-response model; --set's stages are scored by "
                         f"the sentence encoder")
    if source == "sentence_encoder":
        embedder = load_model(path, "sentence", {"pooling": "mean"})
        return UtteranceSimilarity(SentenceEncoderSimilarity(embedder, sentence_encoder_context, batch_size),
                                   sentence_encoder_similarity)
    raise ValueError(f"unknown similarity source {source!r}; one of {tuple(SIMILARITY_FLAGS)}")


def shared_model(flag: str, value: Any) -> Any:
    """What the operations needing model flag `flag` share: one fill-mask model serves insert and
    replace (loaded once); other flags pass their paths on."""
    if flag == "fill_mask_model":
        from tfdialemb.augment.fill_mask import FillMaskModel  # pylint: disable=import-outside-toplevel

        return FillMaskModel.load(value)
    return value


def build_operations(preset: Preset, models: Mapping[str, Any], load_model: Callable, seed: int = 0,
                     settings: Optional[Mapping[str, Mapping[str, Any]]] = None,
                     similarity: Optional[Mapping[str, Any]] = None) -> OperationSet:
    """The operations of `preset`, in its order, after `check_models`.

    `load_model` opens the similarity model (`load_similarity`); `settings[operation]` are keyword
    arguments of that operation's constructor (absent or None: its own default); `similarity` the
    keyword arguments of `load_similarity`.
    """
    check_models(preset, models)
    settings = settings or {}
    shared = None
    if preset.similarity is not None:
        shared = load_similarity(preset.similarity, models[SIMILARITY_FLAGS[preset.similarity]], load_model,
                                 **(similarity or {}))
    loaded = {"similarity": shared}
    operations = []
    for name in preset.operations:
        cls = OPERATIONS[name]
        need = cls.needs[0]
        if need not in loaded:
            loaded[need] = shared_model(need, models[need])
        first = loaded[need]
        given = {key: value for key, value in (settings.get(name) or {}).items() if value is not None}
        operations.append(cls(first, seed=seed, **given))
    return OperationSet(tuple(operations), shared)

