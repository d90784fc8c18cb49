"""Maps the project's special tokens onto a vocabulary's `[unusedN]` slots.

The methods need markers that pretrained vocabularies lack: [EOT] / [EOU] end a turn (FGC,
dial2vec), [B] / [A] and [B1] / [B2] mark the before/after spaces of curved contrastive learning,
and [O] / [E] mark the odd/even speaker. Reusing `[unusedN]` rows keeps the embedding matrix, and
so every pretrained checkpoint, at its original shape.
"""
import re
from typing import Dict, Mapping, Optional, Sequence

BERT_SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
PROJECT_SPECIAL_TOKENS = ("[EOT]", "[EOU]", "[B]", "[A]", "[B1]", "[B2]", "[O]", "[E]")
_UNUSED = re.compile(r"^\[unused(\d+)\]$")


def map_special_tokens(
    vocab: Sequence[str], overrides: Optional[Mapping[str, str]] = None
) -> Dict[str, str]:
    """Returns {project token: vocabulary token it is written as}.

    A token already in the vocabulary is itself; an override names the vocabulary entry to use
    (e.g. {"[EOU]": "[unused1]"} to match dial2vec's released PLATO inputs); every other token takes
    the lowest-numbered free `[unusedN]`, in the order of PROJECT_SPECIAL_TOKENS.
    """
    overrides = dict(overrides or {})
    unknown = sorted(set(overrides) - set(PROJECT_SPECIAL_TOKENS))
    if unknown:
        raise ValueError(f"overrides name unknown special tokens {unknown}; known: {PROJECT_SPECIAL_TOKENS}")
    present = set(vocab)
    for token, target in overrides.items():
        if target not in present:
            raise ValueError(f"override {token} -> {target}: {target!r} is not in the vocabulary")
    taken = set(overrides.values())
    free = sorted(
        (int(m.group(1)), tok) for tok in vocab if (m := _UNUSED.match(tok)) and tok not in taken
    )
    free_tokens = [tok for _, tok in free]
    mapping = {}
    for token in PROJECT_SPECIAL_TOKENS:
        if token in overrides:
            mapping[token] = overrides[token]
        elif token in present:
            mapping[token] = token
        elif free_tokens:
            mapping[token] = free_tokens.pop(0)
        else:
            needed = [t for t in PROJECT_SPECIAL_TOKENS if t not in mapping]
            raise ValueError(
                f"the vocabulary has no free [unusedN] entries for {needed}; add these tokens to "
                "vocab.txt (and rows to the embedding matrix) or free [unusedN] slots"
            )
    return mapping
