"""The texts curved contrastive learning encodes (triple-encoders paper, Sec. 2-3): before / after
spaces and speaker tokens, shared by the CCL / C3L builders, incremental scoring and the export.

The released code's added tokens are written as the project's special tokens, [BEFORE] -> [B] and
[AFTER] -> [A] (the paper names them [B] and [A]):
  CCL: "[S] [B] u_i" and "[A] u_k";  C3L: "[B1] [S] [B] u_i", "[B2] [S] [B] u_j" and "[A] u_k",
where the speaker token S is [O] for an odd distance to the after-space utterance and [E] for an
even one (UKPLab/acl2024-triple-encoders
triple_encoders/TripleEncodersForConversationalSequenceModeling.py:evaluate_seq_dataset: the most
recent history utterance, at distance 1 from the candidate, is [O]).
"""
from typing import Optional

EVEN, ODD = "[E]", "[O]"
SPACES = {"c3l": ("[B1]", "[B2]"), "c3l_maxsim": ("[B1]", "[B2]"), "bi_b2": ("[B2]",),
          "ccl": ("",)}
"""Scoring mode → the before spaces a history utterance is encoded in (incremental scoring,
`tfdialemb.inference.sequence_scorer`, the curved export and the triple-encoder evaluations)."""


def speaker_token(distance: int) -> str:
    """[O] for an odd distance to the after-space utterance, [E] for an even one."""
    return ODD if distance % 2 else EVEN


def before_text(text: str, speaker: Optional[str], space: str = "") -> str:
    """`[space] [S] [B] text`: space "" (CCL), "[B1]" or "[B2]" (C3L); `speaker` None leaves S
    out (a model trained without speaker tokens)."""
    parts = ([space] if space else []) + ([speaker] if speaker else [])
    return " ".join(parts + ["[B]", text])


def after_text(text: str) -> str:
    """`[A] text`: the after space of CCL and C3L."""
    return f"[A] {text}"
