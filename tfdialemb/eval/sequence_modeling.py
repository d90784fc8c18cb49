"""Dialogue sequence modelling (triple-encoders Sec. 4.1, 6.1; UKPLab/acl2024-triple-encoders
triple_encoders/TripleEncodersForConversationalSequenceModeling.py:evaluate_seq_dataset): the average
rank of the true next utterance among all next utterances at the same depth.

For each history length h, every dialogue with more than h turns is one query: history d[:h],
true next d[h]; the candidates of h are the true next utterances of all those dialogues (the
pool size is reported as `candidates_h{h}`). Candidates are scored by `SequenceScorer` (Eq. 3,
MaxSim, or a bi-encoder sum), each dialogue's state grown turn by turn as at inference.
Reported: `avg_rank_h{h}`, the mean 1-based rank per h, and `avg_rank`, the mean of those means
(the paper's overall average rank, the released code has no overall figure). Ties rank pessimistically by
default, the true utterance after every candidate with its score (eval/metrics.py); the released
code ranks optimistically, the first position of the true score in the sorted list
(UKPLab/acl2024-triple-encoders triple_encoders/TripleEncodersForSequenceModeling.py:
_sequence_model_batch), which `ties="optimistic"` (`--rank_ties=optimistic`) reproduces.

Every distinct text (the 2-4 before-space variants of each history utterance, the after-space
text of each candidate) is encoded once, in one call to `encode`.
"""
import re
from typing import Dict, Iterable, List, Optional

import numpy as np

from tfdialemb.text.curved_format import after_text
from tfdialemb.dialogue import merge_consecutive_turns, read_dialogues
from tfdialemb.eval import metrics
from tfdialemb.eval.curved_task import CurvedTaskEvaluator
from tfdialemb.eval.evaluator import register_evaluator
from tfdialemb.eval.inputs import Embed, embed_distinct
from tfdialemb.core.options import Option


def _history_lengths(history_lengths: Iterable[int], mode: str) -> List[int]:
    given = list(history_lengths)
    if not given or any(isinstance(h, bool) or not isinstance(h, (int, np.integer)) or h < 1
                        for h in given):
        raise ValueError(f"history_lengths must be positive ints, got {given}")
    lengths = sorted(set(given))
    if mode.startswith("c3l") and lengths[0] < 2:
        raise ValueError(f"mode {mode!r} mixes pairs of history utterances: history_lengths "
                         f"must be >= 2, got {lengths[0]}")
    return [int(h) for h in lengths]


def evaluate_sequence_modeling(path: str, encode: Embed, mode: str = "c3l",
                               k_last_rows: Optional[int] = None,
                               history_lengths: Iterable[int] = range(2, 11),
                               speaker_tokens: bool = True,
                               merge_turns: bool = False,
                               ties: str = metrics.PESSIMISTIC) -> Dict[str, float]:
    """{"avg_rank", "avg_rank_h{h}", "candidates_h{h}", "single_candidate_lengths"} of the
    canonical dialogue file `path`, consecutive turns of one speaker merged first with
    `merge_turns` (as the model's training build did), ties ranked as `ties` says
    (metrics.rank_of); history lengths that no dialogue exceeds are left out, and so are those
    only one dialogue exceeds (its next utterance would rank first among itself alone), counted in
    `single_candidate_lengths`."""
    # pylint: disable=import-outside-toplevel
    from tfdialemb.inference.sequence_scorer import SequenceScorer, before_variants, check_mode

    k_last_rows = check_mode(mode, k_last_rows)
    metrics.check_ties(ties)
    lengths = _history_lengths(history_lengths, mode)
    read = read_dialogues(path)
    dialogues = [[turn.text for turn in dialogue.turns]
                 for dialogue in (map(merge_consecutive_turns, read) if merge_turns else read)]
    reached = {h: sum(len(turns) > h for turns in dialogues) for h in lengths}
    depths = [h for h in lengths if reached[h] > 1]
    if not depths:
        raise ValueError(f"{path}: no two dialogues have more than {lengths[0]} turns; the next utterance "
                         "ranks among those of the other dialogues at the same history length")
    deepest = depths[-1]

    def scored_prefix(turns: List[str]) -> List[str]:
        """The utterances a dialogue adds before its last scored depth."""
        return turns[:min(len(turns) - 1, deepest)]

    pools = {h: [turns for turns in dialogues if len(turns) > h] for h in depths}
    histories = (text for turns in dialogues for utterance in scored_prefix(turns)
                 for text in before_variants(utterance, mode, speaker_tokens))
    nexts = (after_text(turns[h]) for h, pool in pools.items() for turns in pool)
    vectors = embed_distinct(encode, [*histories, *nexts])
    candidates = {h: np.stack([vectors[after_text(turns[h])] for turns in pool])
                  for h, pool in pools.items()}
    ranks: Dict[int, List[int]] = {h: [] for h in depths}
    for turns in dialogues:
        scorer = SequenceScorer(lambda texts: np.stack([vectors[t] for t in texts]), mode,
                                k_last_rows, speaker_tokens)
        for position, utterance in enumerate(scored_prefix(turns)):
            scorer.add(utterance)
            h = position + 1
            if h in ranks:
                ranks[h].append(metrics.rank_of(scorer.score(candidates[h]), len(ranks[h]), ties))
    results: Dict[str, float] = {}
    for h in depths:
        results[f"avg_rank_h{h}"] = float(np.mean(ranks[h]))
        results[f"candidates_h{h}"] = len(pools[h])
    results["avg_rank"] = float(np.mean([results[f"avg_rank_h{h}"] for h in depths]))
    results["single_candidate_lengths"] = sum(reached[h] == 1 for h in lengths)
    return results


@register_evaluator
class SequenceModelingEvaluator(CurvedTaskEvaluator):
    """`sequence_modeling`: the average rank of the true next utterance among all next utterances at
    the same history length, per --history_lengths and overall."""

    name = "sequence_modeling"
    options = CurvedTaskEvaluator.options + (
        Option("k_last_rows", None, "c3l modes: only the k last rows of the triangle.", lower_bound=1, kind=int),
        Option("history_lengths", tuple(str(h) for h in range(2, 11)), "History lengths scored.", kind=list))

    def columns(self, metrics):
        """The average rank per history length scored, then overall."""
        lengths = sorted(int(m.group(1)) for m in map(re.compile(r"avg_rank_h(\d+)$").match, metrics) if m)
        return [(f"avg_rank_h{h}", f"avg. rank h={h}") for h in lengths] + [("avg_rank", "avg. rank")]

    def score(self, source, eval_file, encode, mode, options):
        try:
            lengths = [int(h) for h in options.history_lengths]
        except ValueError:
            raise ValueError(f"--history_lengths must be integers, got {options.history_lengths}") from None
        merge = source.settings["merge_consecutive_turns"]
        source.embedding.update(k_last_rows=options.k_last_rows, merge_consecutive_turns=merge)
        return evaluate_sequence_modeling(eval_file, encode, mode=mode, k_last_rows=options.k_last_rows,
                                          history_lengths=lengths, speaker_tokens=source.settings["speaker_tokens"],
                                          merge_turns=merge, ties=options.rank_ties)

    def validation(self, eval_file, settings, options):
        return lambda runtime: evaluate_sequence_modeling(eval_file, runtime.embed, mode=settings["curved"],
                                                          speaker_tokens=settings["speaker_tokens"],
                                                          merge_turns=settings["merge_consecutive_turns"])
