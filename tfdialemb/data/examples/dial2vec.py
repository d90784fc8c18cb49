"""dial2vec training examples (dial2vec Sec. 3.1): a dialogue and negatives that keep one interlocutor.

One example per dialogue with at least two speakers (others are skipped): feature `samples` =
[the dialogue itself, n_1, ..., n_N], N = `negatives` (the paper and the released code: 9). Each
sample is a list of (role id, text) turns; the build packs it into one sequence with turn and
role ids (`tfdialemb.text.dialogue_packing`). A negative keeps every turn of one interlocutor
verbatim and replaces every turn of the others by an independent utterance drawn from the pool
(other dialogues only); replaced turns keep their position and role id, so the negative has the
positive's turn/role layout and only the kept interlocutor's words are genuine.

Which interlocutor a negative keeps (`negative_role`):
  - "random" (paper 3.1, "randomly select an interlocutor"): drawn uniformly among the
    dialogue's roles, independently for every negative, so one example mixes negatives against
    both interlocutors;
  - "fixed" (AlibabaResearch/DAMO-ConvAI dial2vec/data/generate_training.py): always role 1, the
    second speaker by first appearance, replacing role 0.

Where a replaced turn's utterance comes from (`negative_pool`):
  - "per_role" (default): an utterance of the replaced turn's own role id in another dialogue.
    The paper fills the turns of p2 "with the utterances of p2 randomly sampled from all dialogue
    sessions" (Sec. 3.1); the released generate_training.py:get_data_dict pools only role-"0"
    utterances (`flatten_neg_samples`) and get_single_sample fills only role-"0" turns from it.
    Role ids are those of the samples: speakers numbered by first appearance in their own
    dialogue, so role 0's pool holds every dialogue's first speaker (the paper's p1 of
    S = {u_1^{p1}, u_2^{p2}, ...}); single-speaker dialogues, which yield no example, still
    feed the pool. A role whose pool holds too few utterances of other dialogues for a
    negative (e.g. a third role that few dialogues have) stops the build with an error naming
    the role; "mixed" needs no per-role supply.
  - "mixed": an utterance of any role of another dialogue (this library's earlier behaviour).

Roles are speakers numbered by first appearance (`tfdialemb.dialogue.role_ids`). A dialogue with
more than `max_roles` speakers (default 2, the paper's two interlocutors) folds the extra
speakers into role `max_roles - 1`, which then stands for "everyone else"; with two roles a
three-party dialogue is the first speaker against the rest. Negatives are one-vs-rest: keeping
role r replaces the turns of every other role. Models must use `num_roles >= max_roles`.
"""
import collections
import dataclasses
from typing import Any, Dict, Iterator, List, Optional, Tuple

import numpy as np

from tfdialemb.data.examples import ExampleBuilder, register
from tfdialemb.data.records import DIALOGUE_LIST
from tfdialemb.data.sampling import DialoguePool
from tfdialemb.dialogue import Dialogue, capped_roles

NEGATIVE_ROLES = ("random", "fixed")
RELEASED_KEPT_ROLE = 1
NEGATIVE_POOLS = ("per_role", "mixed")


@register
class Dial2vecBuilder(ExampleBuilder):
    name = "dial2vec"
    schema = {"samples": DIALOGUE_LIST}
    uses_pool = True

    @dataclasses.dataclass(frozen=True)
    class Params:
        negatives: int = 9
        negative_role: str = "random"
        negative_pool: str = "per_role"
        max_roles: int = 2

    def validate(self) -> None:
        p = self.params
        if p.negatives < 1 or p.max_roles < 2:
            raise ValueError(f"dial2vec parameters out of range (negatives >= 1, max_roles >= 2): {p}")
        if p.negative_role not in NEGATIVE_ROLES:
            raise ValueError(f"negative_role must be one of {NEGATIVE_ROLES}, got {p.negative_role!r}")
        if p.negative_pool not in NEGATIVE_POOLS:
            raise ValueError(f"negative_pool must be one of {NEGATIVE_POOLS}, got {p.negative_pool!r}")

    def pool_roles(self, dialogue: Dialogue) -> List[int]:
        return capped_roles(dialogue, self.params.max_roles)

    def examples(self, dialogue: Dialogue, index: int, rng: np.random.Generator,
                 pool: Optional[DialoguePool]) -> Iterator[Dict[str, Any]]:
        roles = capped_roles(dialogue, self.params.max_roles)
        present = sorted(set(roles))
        if len(present) < 2:
            return
        positive = [(role, turn.text) for role, turn in zip(roles, dialogue.turns)]
        negatives = [self._negative(positive, self._kept_role(present, rng), index, rng, pool)
                     for _ in range(self.params.negatives)]
        yield {"samples": [positive] + negatives}

    def _kept_role(self, present: List[int], rng: np.random.Generator) -> int:
        if self.params.negative_role == "fixed":
            return RELEASED_KEPT_ROLE
        return present[int(rng.integers(len(present)))]

    def _negative(self, positive: List[Tuple[int, str]], kept: int, index: int, rng: np.random.Generator,
                  pool: DialoguePool) -> List[Tuple[int, str]]:
        source = (lambda role: role) if self.params.negative_pool == "per_role" else (lambda role: None)  # None: any
        needed = collections.Counter(source(role) for role, _ in positive if role != kept)
        fillers = {drawn: iter(self._draw(pool, rng, drawn, count, index)) for drawn, count in needed.items()}
        return [(role, text if role == kept else next(fillers[source(role)])) for role, text in positive]

    @staticmethod
    def _draw(pool: DialoguePool, rng: np.random.Generator, role: Optional[int], count: int,
              index: int) -> List[str]:
        try:
            return pool.sample(rng, count, exclude_dialogue=index, role=role)
        except ValueError as error:
            if role is None:
                raise
            raise ValueError(f"{error}, or draw from every role with negative_pool=mixed "
                             f"(--dial2vec_negative_pool=mixed)") from None
