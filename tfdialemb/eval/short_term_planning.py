"""Short-term planning (STP; triple-encoders Sec. 4.2, Eq. 4; UKPLab/acl2024-triple-encoders
triple_encoders/TripleEncodersForSTP.py): which candidate
next utterance leads to a goal g turns ahead.

The set is JSONL, one record per (dialogue, h, g):
  {"id", "history": [d[0] .. d[h-1]], "candidate": d[h], "goal": d[h+g],
   "distractors": [...], "history_length": h, "goal_distance": g, "distractor_source": "..."}
(data_prep/build_stp_set.py writes it; `distractor_source` says where the distractors come from,
"unrecorded" in sets written before it was recorded). The true candidate is ranked among itself
and the distractors; a distractor whose text equals the true candidate would tie with it by
construction and is dropped (counted in `dropped_distractors`), except under the released
scorer, which scores the released candidate matrix, every distractor kept. A record left with no
distractor has nothing to be ranked against and is refused.

Scores, with speaker tokens by distance to the goal (speaker_token; UKPLab/acl2024-triple-encoders
triple_encoders/TripleEncodersForSTP.py:evaluate_stp_dataset):
- `c3l`: Eq. 4, cos(E([B2] [S_g] [B] c), E([A] g)) + (1/n) Σ_j cos(mean(E([B1] [S_j] [B] h_j),
  E([B2] [S_g] [B] c)), E([A] g)) with S_j = speaker_token(h + g - j); the released code's
  dim-0 normalisation is fixed (curved_scoring.planning_scores), unless `scorer` is `released`
  (`--c3l_stp_scorer`, curved_scoring.released_planning_scores).
- `bi_b2`: the triple-encoder as bi-encoder, cos(E([B2] [S_g] [B] c), E([A] g)).
- `ccl`: the CCL bi-encoder, cos(E([S_g] [B] c), E([A] g)) (triple-encoders Sec. 4.2.1).
Reported: hits@5/10/25/50 (the released "Top k") and avg_rank per (h, g) as
`{metric}_h{h}_g{g}` with `records_h{h}_g{g}`, and overall as the mean over the (h, g) groups
(the paper averages its per-file results), and `distractor_sources`, the distinct sources of the
set's distractors. hits@k is None (null) for a group where no record has more than k candidates
(all in the top k, it is 1 for every model), and overall when it is None for a group. Ties rank
pessimistically by default; the released code ranks optimistically (`ties`,
eval/metrics.py:rank_of).
"""
import dataclasses
import json
from typing import Any, Dict, Iterator, List, Tuple

import numpy as np

from tfdialemb.text.curved_format import SPACES, after_text, before_text, speaker_token
from tfdialemb.dialogue import DialogueFormatError, ErrorPolicy, iter_lines
from tfdialemb.eval.curved_task import CurvedTaskEvaluator
from tfdialemb.eval.evaluator import register_evaluator
from tfdialemb.eval.inputs import Embed, embed_distinct
from tfdialemb.eval.metrics import PESSIMISTIC, check_ties, rank_of
from tfdialemb.core.options import PAPER, RELEASED, Switch
from tfdialemb.core.similarity import cosine_matrix

MODES = ("c3l", "bi_b2", "ccl")
HITS_AT = (5, 10, 25, 50)
UNRECORDED = "unrecorded"
SCORER = Switch("c3l_stp_scorer", PAPER, "stp with --curved_mode=c3l: paper (Eq. 4's cosines) or "
                "released (the released compute_stp_scores, candidates normalised across the "
                "candidates: to reproduce the published numbers).",
                paper="Eq. 4: cos(E([B2] c), E([A] g)) + (1/n) Σ_j cos(mix_j, E([A] g)), "
                      "duplicates of the true candidate dropped",
                released="UKPLab/acl2024-triple-encoders triple_encoders/TripleEncodersForSTP.py:"
                         "compute_stp_scores: the candidate matrix normalised along dim 0 "
                         "(across candidates), the first term times n, every distractor kept")


@dataclasses.dataclass(frozen=True)
class PlanningRecord:
    """One STP question: rank `candidate` (d[h]) among `distractors` towards `goal` (d[h+g])."""
    id: str
    history: Tuple[str, ...]
    candidate: str
    goal: str
    distractors: Tuple[str, ...]
    goal_distance: int
    distractor_source: str = UNRECORDED

    @property
    def history_length(self) -> int:
        return len(self.history)

    def to_json(self) -> Dict[str, Any]:
        return {"id": self.id, "history": list(self.history), "candidate": self.candidate,
                "goal": self.goal, "distractors": list(self.distractors),
                "history_length": self.history_length, "goal_distance": self.goal_distance,
                "distractor_source": self.distractor_source}


def _texts(record: Dict[str, Any], field: str) -> Tuple[str, ...]:
    value = record.get(field)
    if not isinstance(value, list) or not value or not all(
            isinstance(text, str) and text.strip() for text in value):
        raise ValueError(f"{field!r} must be a non-empty list of non-empty strings")
    return tuple(value)


def _text(record: Dict[str, Any], field: str) -> str:
    value = record.get(field)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{field!r} must be a non-empty string")
    return value


def _positive_int(record: Dict[str, Any], field: str) -> int:
    value = record.get(field)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{field!r} must be a positive integer, got {value!r}")
    return value


def parse_planning_record(record: Any) -> PlanningRecord:
    """A PlanningRecord from a decoded JSON line; ValueError naming the bad field."""
    if not isinstance(record, dict):
        raise ValueError("an STP record is a JSON object")
    history = _texts(record, "history")
    if _positive_int(record, "history_length") != len(history):
        raise ValueError(f"history_length {record['history_length']} but the history holds "
                         f"{len(history)} utterances")
    source = _text(record, "distractor_source") if "distractor_source" in record else UNRECORDED
    return PlanningRecord(_text(record, "id"), history, _text(record, "candidate"),
                          _text(record, "goal"), _texts(record, "distractors"),
                          _positive_int(record, "goal_distance"), source)


def read_planning_records(path: str) -> Iterator[PlanningRecord]:
    """Streams the records of an STP set; a bad line or a repeated id raises a
    DialogueFormatError naming file and line."""
    seen = set()
    for number, line in iter_lines(path, ErrorPolicy("fail")):
        if not line.strip():
            raise DialogueFormatError(path, number, "blank line")
        try:
            record = parse_planning_record(json.loads(line))
        except json.JSONDecodeError as e:
            raise DialogueFormatError(path, number, f"malformed JSON ({e.msg})") from None
        except ValueError as e:
            raise DialogueFormatError(path, number, str(e)) from None
        if record.id in seen:
            raise DialogueFormatError(path, number, f"duplicate id {record.id!r}")
        seen.add(record.id)
        yield record


def ranked_candidates(record: PlanningRecord, keep_duplicates: bool = False) -> List[str]:
    """The true candidate first, then the distractors, those equal to it only with
    `keep_duplicates`."""
    return [record.candidate] + [d for d in record.distractors
                                 if keep_duplicates or d != record.candidate]


def planning_texts(record: PlanningRecord, mode: str, speaker_tokens: bool = True,
                   keep_duplicates: bool = False) -> Tuple[List[str], List[str], str]:
    """(history [B1] texts (c3l only), candidate before texts, goal after text) of a record."""
    h, g = record.history_length, record.goal_distance
    space = SPACES[mode][-1]
    candidates = [before_text(c, speaker_token(g) if speaker_tokens else None, space)
                  for c in ranked_candidates(record, keep_duplicates)]
    history = [before_text(u, speaker_token(h + g - j) if speaker_tokens else None, "[B1]")
               for j, u in enumerate(record.history)] if mode == "c3l" else []
    return history, candidates, after_text(record.goal)


def _chunks(records: Iterator[PlanningRecord], size: int) -> Iterator[List[PlanningRecord]]:
    chunk: List[PlanningRecord] = []
    for record in records:
        chunk.append(record)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def evaluate_short_term_planning(path: str, encode: Embed, mode: str = "c3l",
                                 speaker_tokens: bool = True, records_per_call: int = 256,
                                 scorer: str = PAPER, ties: str = PESSIMISTIC) -> Dict[str, Any]:
    """hits@k and avg_rank overall and per (h, g), and the distractor sources (module docstring).
    `scorer` is SCORER's value (`released` with mode c3l only), `ties` rank_of's. Texts are
    encoded `records_per_call` records at a time, each distinct text of a chunk once, so memory
    stays bounded on sets with 100 generated candidates per record."""
    # pylint: disable=import-outside-toplevel
    from tfdialemb.layers.curved_scoring import planning_scores, released_planning_scores

    if mode not in MODES:
        raise ValueError(f"STP mode must be one of {MODES}, got {mode!r}")
    if scorer not in SCORER.choices:
        raise ValueError(f"the STP scorer must be one of {SCORER.choices}, got {scorer!r}")
    if scorer == RELEASED and mode != "c3l":
        raise ValueError(f"--{SCORER.name}={RELEASED} is the released triple-encoder scoring "
                         f"(--curved_mode=c3l), not --curved_mode={mode}")
    if records_per_call < 1:
        raise ValueError(f"records_per_call must be positive, got {records_per_call}")
    check_ties(ties)
    score = released_planning_scores if scorer == RELEASED else planning_scores
    ranks: Dict[Tuple[int, int], List[int]] = {}
    largest: Dict[Tuple[int, int], int] = {}
    dropped = 0
    sources = set()
    for chunk in _chunks(read_planning_records(path), records_per_call):
        texts = [planning_texts(record, mode, speaker_tokens, keep_duplicates=scorer == RELEASED)
                 for record in chunk]
        vectors = embed_distinct(encode, (text for history, candidates, goal in texts
                                          for text in (*history, *candidates, goal)))
        for record, (history, candidates, goal) in zip(chunk, texts):
            dropped += len(record.distractors) + 1 - len(candidates)
            if len(candidates) < 2:
                raise ValueError(f"{path}: record {record.id!r} has no distractor but copies of its candidate, "
                                 "so nothing to rank it against")
            sources.add(record.distractor_source)
            before = np.stack([vectors[text] for text in candidates]).astype(np.float64)
            goal_vector = vectors[goal].astype(np.float64)
            if mode == "c3l":
                b1 = np.stack([vectors[text] for text in history]).astype(np.float64)
                scores = score(b1, before, goal_vector).numpy()
            else:
                scores = cosine_matrix(before, goal_vector[np.newaxis])[:, 0]
            group = (record.history_length, record.goal_distance)
            ranks.setdefault(group, []).append(rank_of(scores, 0, ties))
            largest[group] = max(largest.get(group, 0), len(candidates))
    if not ranks:
        raise ValueError(f"{path}: no STP records")
    results: Dict[str, Any] = {}
    for (h, g), group in sorted(ranks.items()):
        group = np.asarray(group)
        for k in HITS_AT:
            results[f"hits@{k}_h{h}_g{g}"] = float(np.mean(group <= k)) if k < largest[h, g] else None
        results[f"avg_rank_h{h}_g{g}"] = float(np.mean(group))
        results[f"records_h{h}_g{g}"] = len(group)
    for metric in [f"hits@{k}" for k in HITS_AT] + ["avg_rank"]:
        values = [results[f"{metric}_h{h}_g{g}"] for h, g in ranks]
        results[metric] = None if None in values else float(np.mean(values))
    results.update(records=sum(len(group) for group in ranks.values()),
                   dropped_distractors=dropped, distractor_sources=sorted(sources))
    return results


@register_evaluator
class ShortTermPlanningEvaluator(CurvedTaskEvaluator):
    """`stp`: hits@5/10/25/50 and the average rank of the true next utterance towards a goal, on a
    set built by `python -m data_prep.build_stp_set`."""

    name = "stp"
    options = CurvedTaskEvaluator.options + (SCORER,)
    headline = tuple((f"hits@{k}", f"hits@{k}") for k in HITS_AT) + (("avg_rank", "avg. rank"),)

    def check(self, options):
        if options.curved_mode and options.curved_mode not in MODES:
            raise ValueError(f"--task=stp scores with --curved_mode in {', '.join(MODES)}, not {options.curved_mode}")

    def score(self, source, eval_file, encode, mode, options):
        scorer = getattr(options, SCORER.name)
        source.embedding.update(c3l_stp_scorer=scorer)
        return evaluate_short_term_planning(eval_file, encode, mode=mode,
                                            speaker_tokens=source.settings["speaker_tokens"], scorer=scorer,
                                            ties=options.rank_ties)
