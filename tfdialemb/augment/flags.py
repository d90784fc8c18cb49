"""The flags of the augmentation models and operations, for `python -m tfdialemb.augment` and any
command that augments (`define_flags` once, then `model_paths`, `operation_settings` and
`similarity_settings` of the parsed values).

The model flags name directories (`operations.MODEL_FLAGS`). The fill-mask flags are the
options the token operations declare (insert and replace differ in the released code, e.g. in how
many words they mask: --mask_rate and --replace_rate); the translation flags are
back-translation's own. The stage flags carry the
released values (mylib/augmentations/prune.py, shuffle.py).
"""
from typing import Any, Dict, Mapping

from absl import flags

from tfdialemb.augment.back_translation import OPTIONS as TRANSLATION_FLAGS
from tfdialemb.augment.operations import MODEL_FLAGS
from tfdialemb.augment.shuffle import SEARCHES
from tfdialemb.augment.similarity_sources import MEASURES, READING
from tfdialemb.augment.stages import CLUSTERINGS
from tfdialemb.augment.token_insertion import OPTIONS as INSERTION_OPTIONS
from tfdialemb.augment.token_replacement import OPTIONS as REPLACEMENT_OPTIONS
from tfdialemb.core.options import Option

TOKEN_OPTIONS = tuple({o.name: o for o in INSERTION_OPTIONS + REPLACEMENT_OPTIONS}.values())
"""The flags of insert and replace (the fill-mask ones shared), with their released defaults."""
TRANSLATION_OPTIONS = tuple(o for o in TRANSLATION_FLAGS if o.name != "translation_models")
"""The translation flags but the model paths (a model flag, `define_flags`)."""
STAGE_OPTIONS = (
    Option("stage_clustering", "released", "released: unconstrained average linkage, as "
           "mylib/augmentations/prune.py (what built the thesis' sets; a stage may gather utterances from "
           "far apart); contiguous: average linkage merging only neighbouring runs, so every stage is "
           "consecutive utterances.", choices=CLUSTERINGS),
    Option("turns_per_stage", 3, "A dialogue of L utterances is cut into at most L // this stages.",
           lower_bound=1),
    Option("crop_min_turns", 6, "Crop only dialogues of at least this many utterances.", lower_bound=2),
    Option("crop_min_stages", 2, "Crop draws the number of stages from [this, L // turns_per_stage].",
           lower_bound=2),
    Option("crop_keep", None, "Fraction of the utterances crop keeps at least, dropping random stages "
           "(default: keep the largest stage, as the released code).", kind=float, lower_bound=0.0,
           upper_bound=1.0),
    Option("crop_min_kept", 2, "Crop never leaves fewer utterances than this.", lower_bound=1),
    Option("shuffle_min_turns", 12, "Shuffle only dialogues of at least this many utterances.",
           lower_bound=2),
    Option("shuffle_min_stages", 4, "Shuffle cuts into [this, L // turns_per_stage] stages.", lower_bound=2),
    Option("shuffle_search", "best", "best: n random stage orders for every number of stages n, the one "
           "the similarity model scores best kept (released); random: one random order.",
           choices=SEARCHES),
    Option("shuffle_allow_unchanged", True, "Let shuffle keep an order that leaves the dialogue as it "
           "was when it scores best (the released shuffle.py:41, 48); false: such orders are redrawn."),
)
SIMILARITY_OPTIONS = (
    Option("sentence_encoder_context", 1, "Utterances per context window of --sentence_encoder (1: "
           "utterance against utterance, the thesis; 3: the released code).", lower_bound=1),
    Option("sentence_encoder_similarity", "cosine", "cosine (the thesis) or dot (the released code's "
           "product of unnormalised vectors) between --sentence_encoder embeddings.", choices=MEASURES),
    Option("model_batch_size", 64, "Texts per forward pass of the similarity model.", lower_bound=1),
    READING,
)
OPERATION_SETTINGS = {
    "insert": {o.name: o.name for o in INSERTION_OPTIONS},
    "replace": {o.name: o.name for o in REPLACEMENT_OPTIONS},
    "translate": {o.name: o.name for o in TRANSLATION_OPTIONS},
    "crop": {"min_turns": "crop_min_turns", "min_stages": "crop_min_stages", "turns_per_stage": "turns_per_stage",
             "clustering": "stage_clustering", "keep": "crop_keep", "min_kept": "crop_min_kept"},
    "shuffle": {"min_turns": "shuffle_min_turns", "min_stages": "shuffle_min_stages",
                "turns_per_stage": "turns_per_stage", "clustering": "stage_clustering",
                "search": "shuffle_search", "allow_unchanged": "shuffle_allow_unchanged"},
}
"""Operation -> {constructor argument: flag}."""
SIMILARITY_SETTINGS = {"sentence_encoder_context": "sentence_encoder_context",
                       "sentence_encoder_similarity": "sentence_encoder_similarity",
                       "batch_size": "model_batch_size", "context_response_reading": READING.name}
"""`operations.load_similarity` argument -> flag."""
OPTIONS = TOKEN_OPTIONS + TRANSLATION_OPTIONS + STAGE_OPTIONS + SIMILARITY_OPTIONS


MODEL_OPTIONS = tuple(Option(name, None, f"{what}.", kind=str) for name, what in MODEL_FLAGS.items())
"""The model directories (`--translation_models` two of them, comma-separated)."""


def define_flags(flag_values=flags.FLAGS) -> None:
    for option in MODEL_OPTIONS + OPTIONS:
        option.define(flag_values=flag_values)


def flag_names() -> list:
    """The name of every flag `define_flags` defines."""
    return [o.name for o in MODEL_OPTIONS + OPTIONS]


def values(flag_values=flags.FLAGS) -> Dict[str, Any]:
    """The parsed value of every flag `define_flags` defines."""
    return {name: flag_values[name].value for name in flag_names()}


def model_paths(given: Mapping[str, Any]) -> Dict[str, Any]:
    """The model flags' values, `translation_models` split into its directories."""
    paths = {name: given[name] for name in MODEL_FLAGS}
    paths["translation_models"] = [p for p in (paths["translation_models"] or "").split(",") if p]
    return paths


def operation_settings(given: Mapping[str, Any]) -> Dict[str, Dict[str, Any]]:
    return {operation: {argument: given[flag] for argument, flag in table.items()}
            for operation, table in OPERATION_SETTINGS.items()}


def similarity_settings(given: Mapping[str, Any]) -> Dict[str, Any]:
    return {argument: given[flag] for argument, flag in SIMILARITY_SETTINGS.items()}
