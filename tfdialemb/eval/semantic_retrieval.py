r"""DialogueCSE's semantic retrieval (SR): rank each query's candidates by cosine, judge by intent.

The set is either the released text file (`qid \t query \t intent \t pos_ids \t neg_ids`, read by
the "dialoguecse_sr" converter of `tfdialemb.converters`) or its canonical JSONL (one record per line, a single
turn holding the text, labels `positive_ids` and `negative_ids`). A line with both lists empty is
a candidate only. A line with exactly one empty list is skipped and counted: the released
evaluator's `check_rank_matrix` needs a relevant and a non-relevant candidate in every ranking.
A query listed among its own candidates, or a candidate listed twice, is refused. Ties rank
pessimistically and a NaN score is a miss (`tfdialemb.eval.metrics`).

For each query the candidates are its positives followed by its negatives, scored by the cosine
of their embeddings with the query's; every distinct text is embedded once, since the released
evaluator looks embeddings up by text.
"""
import collections
import dataclasses
import functools
from typing import Dict, List, Tuple

import numpy as np

from tfdialemb.converters.dialoguecse_eval import convert_sr
from tfdialemb.dialogue import Dialogue, DialogueFormatError
from tfdialemb.eval import metrics
from tfdialemb.eval.evaluator import register_evaluator
from tfdialemb.eval.inputs import Embed, embed_distinct, read_eval_records
from tfdialemb.eval.sentence_task import SentenceTaskEvaluator
from tfdialemb.core.similarity import cosine_matrix

PRECISION_AT = (1, 2, 5, 10)
RECALL_AT = (10, 20, 50)
RANKING_METRICS = {
    "map": metrics.average_precision,
    "mrr": metrics.reciprocal_rank,
    **{f"p@{k}": functools.partial(metrics.precision_at_k, k=k) for k in PRECISION_AT},
    **{f"r@{k}": functools.partial(metrics.recall_at_k, k=k) for k in RECALL_AT},
}
CUT_OFFS = {**{f"p@{k}": k for k in PRECISION_AT}, **{f"r@{k}": k for k in RECALL_AT}}


@dataclasses.dataclass(frozen=True)
class RetrievalQuery:
    text: str
    positives: Tuple[str, ...]
    negatives: Tuple[str, ...]


def _candidate_ids(path: str, line: int, record: Dialogue) -> Tuple[List[str], List[str]]:
    """The positive and negative ids of an SR record, checked as far as the JSONL form needs."""
    positives, negatives = record.labels.get("positive_ids"), record.labels.get("negative_ids")
    id_lists = (positives, negatives)
    if len(record.turns) != 1 or not all(
        isinstance(ids, list) and all(isinstance(i, str) for i in ids) for ids in id_lists
    ):
        raise DialogueFormatError(
            path, line, "an SR record has one turn and labels positive_ids and negative_ids "
            "(lists of ids)")
    repeated = sorted(i for ids in id_lists for i, n in collections.Counter(ids).items() if n > 1)
    if repeated:
        raise DialogueFormatError(path, line, f"ids listed twice: {repeated} (a candidate would count twice)")
    both = sorted(set(positives) & set(negatives))
    if both:
        raise DialogueFormatError(path, line, f"ids both positive and negative: {both}")
    if record.id in positives or record.id in negatives:
        raise DialogueFormatError(path, line, f"query {record.id!r} lists itself as a candidate; its candidates "
                                  "are other lines of the file (a query retrieving itself would rank first)")
    return positives, negatives


def read_queries(path: str) -> Tuple[List[RetrievalQuery], int]:
    """The queries of an SR set with their candidate texts, and how many lines were skipped."""
    text_of: Dict[str, str] = {}
    pending = []
    skipped = 0
    for line, record in read_eval_records(path, convert_sr):
        positive_ids, negative_ids = _candidate_ids(path, line, record)
        text_of[record.id] = record.turns[0].text
        if positive_ids and negative_ids:
            pending.append((line, record.id, positive_ids, negative_ids))
        elif positive_ids or negative_ids:
            skipped += 1

    def texts(line: int, ids: List[str]) -> Tuple[str, ...]:
        unknown = [i for i in ids if i not in text_of]
        if unknown:
            raise DialogueFormatError(path, line, f"unknown candidate ids {unknown}")
        return tuple(text_of[i] for i in ids)

    queries = [RetrievalQuery(text_of[qid], texts(line, positives), texts(line, negatives))
               for line, qid, positives, negatives in pending]
    return queries, skipped


def read_ranked_queries(path: str) -> Tuple[List[RetrievalQuery], int]:
    """`read_queries`, refusing a set without a query that has both kinds of candidate."""
    queries, skipped = read_queries(path)
    if not queries:
        raise ValueError(f"{path}: no query has both positive and negative candidates")
    return queries, skipped


def evaluate_semantic_retrieval(path: str, embed: Embed) -> Dict[str, float]:
    """MAP, MRR, P@{1,2,5,10} and R@{10,20,50} (means over queries), with the query counts; P@k and
    R@k are None when no query has more than k candidates (all in the top k, they are the same for
    every model)."""
    queries, skipped = read_ranked_queries(path)
    vectors = embed_distinct(
        embed, (text for q in queries for text in (q.text, *q.positives, *q.negatives)))
    rankings = []
    for query in queries:
        candidates = np.stack([vectors[text] for text in query.positives + query.negatives])
        scores = cosine_matrix(vectors[query.text][None], candidates)[0]
        relevance = np.array([1] * len(query.positives) + [0] * len(query.negatives))
        rankings.append((scores, relevance))
    largest = max(len(scores) for scores, _ in rankings)
    results = {name: float(np.mean([metric(scores, relevance) for scores, relevance in rankings]))
               if CUT_OFFS.get(name, 0) < largest else None for name, metric in RANKING_METRICS.items()}
    results.update(queries=len(queries), skipped_queries=skipped)
    return results


@register_evaluator
class SemanticRetrievalEvaluator(SentenceTaskEvaluator):
    name = "sr"
    primary_metric = "map"
    headline = (("map", "MAP"), ("mrr", "MRR"), ("p@1", "P@1"), ("p@5", "P@5"), ("r@10", "R@10"))  # Table 2
    score = staticmethod(evaluate_semantic_retrieval)
    read = staticmethod(read_ranked_queries)
