"""The inference kinds (`KINDS`: what a model serves, the settings each reads, its default length,
whether it needs a trained head), the choices inference must repeat from training, and how a
command settles them: recorded in the model directory (`method.json`), given on the command line,
or defaulted.

A trained model directory records, for each kind it serves, the settings it was trained with;
a flag that contradicts a recorded setting is refused with both values named, except the
settings in OVERRIDABLE (a longer or shorter input, another pooling), which are applied with a
warning. A checkpoint without a record (an untrained encoder) takes the flags or the defaults.
These options are declared once here and used by `train` (as method options), `evaluate` and
`export`.
"""
import dataclasses
import logging
from typing import Any, Dict, List, Mapping, Optional, Tuple

from tfdialemb.options import Option, renamed

POOLING = Option("pooling", "mean", "Token pooling of the last layer for sentence embeddings.",
                 choices=("mean", "cls"))
MAX_LENGTH = Option("max_length", None, "Tokens per input, special tokens included; longer inputs "
                    "are truncated (default: the model's recorded length, else per kind: "
                    "sentence 128, the other kinds 512).", lower_bound=3, kind=int)
SEPARATOR = Option("separator", "sep", "Token between the turns of a packed dialogue: [SEP] or "
                   "[EOU].", choices=("sep", "eou"))
SPEAKER_PREFIX = Option("speaker_prefix", False, "Write each turn of a packed dialogue as \"{speaker index} "
                        "{utterance}\" (the augmentation thesis' released encoder input).")
FINAL_SEPARATOR = Option("final_separator", False, "End a packed dialogue with the separator too, "
                         "\"[CLS] t_0 SEP ... t_n SEP\" (a tokenizer's own [CLS] text [SEP], as the "
                         "augmentation thesis' released code feeds BERT).")
DIALOGUE_POOLING = Option("dialogue_pooling", "interlocutor", "The dialogue embedding served and validated: "
                          "dial2vec's Eq. 4 interlocutor pooling, the mean of all tokens or the [CLS] "
                          "state.", choices=("interlocutor", "mean", "cls"))
NUM_ROLES = Option("num_roles", 2, "Interlocutors told apart (views p1..pR); speakers past them "
                   "fold into the last role.", lower_bound=2)
SPEAKER_TOKENS = Option("speaker_tokens", True, "Curved contrastive texts carry [O] / [E] speaker "
                        "tokens.")
MERGE_TURNS = Option("merge_consecutive_turns", True, "Merge consecutive turns of one speaker before "
                     "use (DialogueCSE and dial2vec pre-processing).")
MIN_TURNS = Option("min_turns", 2, "Drop dialogues with fewer turns (after merging) before building "
                   "(DialogueCSE drops JDDC / ECD dialogues under 4).", lower_bound=1)
POOL_DIALOGUES = Option("pool_dialogues", 100_000, "Negatives are drawn from a uniform reservoir sample of "
                        "this many dialogues: a dialogue, then one of its utterances (DialogueCSE Sec. 4.1). "
                        "At least the corpus's number of dialogues draws from all of it; the build manifest's "
                        "counts.negative_pool says what the pool held.", lower_bound=1)
PAIR_LAYOUTS = ("paper", "ums")
"""The cross-encoder inputs `tfdialemb.text.pair_packing` packs: FGC's text, UMS-ResSel's code."""
PAIR_LAYOUT = Option("pair_layout", "paper", "How a cross-encoder packs a context and a response: paper "
                     "([EOT] after each context turn) or ums (also after the response, taesunwhang/UMS-ResSel); "
                     "formerly --fgc_input.", choices=PAIR_LAYOUTS)
CURVED = Option("curved", "c3l", "A C3L triple-encoder or a CCL bi-encoder.", choices=("c3l", "ccl"))
NORMALIZE = Option("normalize", False, "Scale every embedding to unit L2 norm (sentence-transformers' "
                   "Normalize), so a dot product is a cosine.")
CONTEXT = Option("context", 3, "Utterances before a response that a context-response model encodes, "
                 "each on its own (the augmentation thesis, appendix 1.1: 3).", lower_bound=1)

SETTINGS = {o.name: o for o in (POOLING, MAX_LENGTH, SEPARATOR, NUM_ROLES, SPEAKER_TOKENS,
                                MERGE_TURNS, CURVED, PAIR_LAYOUT, CONTEXT, SPEAKER_PREFIX, FINAL_SEPARATOR,
                                DIALOGUE_POOLING)}


@dataclasses.dataclass(frozen=True)
class InferenceKind:
    """One thing a model serves. `tfdialemb.inference.kinds.RUNTIMES` adds the class that computes
    it and `tfdialemb.serving.kinds.SERVABLES` the SavedModel that serves it, keyed by `name`."""
    name: str
    summary: str
    settings: Tuple[str, ...]
    """The settings it reads (names in SETTINGS)."""
    default_max_length: int
    needs_head: bool = False
    """Built from a method's trained model, heads included; otherwise from the encoder alone, so
    any checkpoint serves it."""
    normalizable: bool = False
    """--normalize scales its embeddings to unit length."""


KINDS = {kind.name: kind for kind in (
    InferenceKind("sentence", "sentence embeddings", ("pooling", "max_length"), 128, normalizable=True),
    InferenceKind("dialogue", "dial2vec dialogue embeddings",
                  ("separator", "num_roles", "max_length", "merge_consecutive_turns", "speaker_prefix",
                   "final_separator", "dialogue_pooling"), 512, normalizable=True),
    InferenceKind("curved", "triple-encoder (C3L) / CCL incremental scores",
                  ("curved", "speaker_tokens", "pooling", "max_length", "merge_consecutive_turns"), 512),
    InferenceKind("selection", "a trained cross-encoder's response-selection scores", ("pair_layout", "max_length"),
                  512, needs_head=True),
    InferenceKind("context_response", "a trained context-response model's context and response vectors",
                  ("context", "max_length", "merge_consecutive_turns"), 512, needs_head=True),
)}
"""What a trained model can serve, by name; a method spec's `offers` lists the ones it serves."""
RENAMED_KINDS = {"triple": "curved"}
"""Former kind names: `--kind` and a `method.json` written before the rename accept them for one
release (the flag with a warning)."""


def current_kind(name: Optional[str]) -> Optional[str]:
    """`name`, or the kind a former name in RENAMED_KINDS now has, with a warning to the log."""
    if name in RENAMED_KINDS:
        logging.getLogger(__name__).warning(renamed(f"--kind={name}", f"--kind={RENAMED_KINDS[name]}"))
        return RENAMED_KINDS[name]
    return name


OVERRIDABLE = ("max_length", "pooling", "dialogue_pooling")
"""The settings a flag may change from the recorded value (with a warning)."""


def resolve(kind: str, recorded: Optional[Mapping[str, Any]], given: Mapping[str, Any],
            source: str) -> Tuple[Dict[str, Any], List[str]]:
    """(settings of `kind`, warnings): each setting from `given` (the flags set on the command
    line), else `recorded` (None: nothing recorded), else its default. A ValueError names a given
    value that contradicts a recorded one, unless the setting is OVERRIDABLE."""
    settings, warnings = {}, []
    recorded = dict(recorded or {})
    for name in KINDS[kind].settings:
        default = KINDS[kind].default_max_length if name == "max_length" else SETTINGS[name].default
        stored = recorded.get(name)
        if name in given and given[name] is not None:
            value = given[name]
            if stored is not None and value != stored:
                if name not in OVERRIDABLE:
                    raise ValueError(f"--{name}={_flag_text(value)} contradicts {source}, trained with "
                                     f"{name}={_flag_text(stored)}; drop the flag")
                warnings.append(f"--{name}={_flag_text(value)} overrides {name}={_flag_text(stored)} "
                                f"recorded in {source}")
        else:
            value = stored if stored is not None else default
        settings[name] = value
    return settings, warnings


def _flag_text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
