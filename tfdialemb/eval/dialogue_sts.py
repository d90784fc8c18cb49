r"""DialogueCSE's dialogue-based STS (D-STS): correlate gold 1-5 scores with embedding cosines.

The set is either the released text file (`score \t s1 \t s2`, read by the
"dialoguecse_sts" converter) or its canonical JSONL (two turns, labels `score`). The prediction is
(cos + 1) / 2, as in the released `eval_sts.py`; both correlations are invariant to that map, which
keeps predictions in [0, 1] for anyone reading them next to the gold scores. A set whose gold
scores are all equal has no correlation and is refused, as is one of fewer than 3 pairs (whose
correlation is 1, -1 or none whatever the model); a model whose predictions are all equal
(or NaN) has none either, and its report says null.
"""
import numbers
from typing import Dict, List, Tuple

import numpy as np

from tfdialemb.converters.dialoguecse_eval import MAX_SCORE, MIN_SCORE, convert_sts
from tfdialemb.dialogue import DialogueFormatError
from tfdialemb.eval import metrics
from tfdialemb.eval.evaluator import register_evaluator
from tfdialemb.eval.inputs import Embed, embed_distinct, read_eval_records
from tfdialemb.eval.sentence_task import SentenceTaskEvaluator
from tfdialemb.core.similarity import cosine_matrix


def read_pairs(path: str) -> Tuple[List[Tuple[str, str]], List[float]]:
    """The sentence pairs of a D-STS set and their gold scores."""
    pairs, gold = [], []
    for line, record in read_eval_records(path, convert_sts):
        score = record.labels.get("score")
        if len(record.turns) != 2 or not isinstance(score, numbers.Real) or isinstance(score, bool):
            raise DialogueFormatError(path, line, "a D-STS record has two turns and a numeric "
                                                  "label 'score'")
        if not MIN_SCORE <= score <= MAX_SCORE:  # also false for NaN
            raise DialogueFormatError(path, line, f"score {score!r} is not a number from {MIN_SCORE} "
                                                  f"to {MAX_SCORE}")
        pairs.append((record.turns[0].text, record.turns[1].text))
        gold.append(float(score))
    return pairs, gold


MIN_PAIRS = 3
"""The fewest pairs a D-STS set is scored on: the correlation of 2 is 1 or -1 whatever the
embeddings (of 1, none)."""


def read_correlated_pairs(path: str) -> Tuple[List[Tuple[str, str]], List[float]]:
    """`read_pairs`, refusing a set whose correlation says nothing of the model: fewer than
    MIN_PAIRS pairs, or one gold score."""
    pairs, gold = read_pairs(path)
    if len(pairs) > 1 and len(set(gold)) < 2:
        raise ValueError(f"{path}: every gold score is {gold[0]:g}; a correlation needs pairs with different "
                         "gold scores")
    if len(pairs) < MIN_PAIRS:
        raise ValueError(f"{path}: {len(pairs)} sentence pair(s); a correlation needs at least {MIN_PAIRS} (that of "
                         "2 is 1 or -1 whatever the model)")
    return pairs, gold


def evaluate_dialogue_sts(path: str, embed: Embed) -> Dict[str, float]:
    """Spearman (the papers' metric) and Pearson between gold scores and (cos + 1) / 2."""
    pairs, gold = read_correlated_pairs(path)
    vectors = embed_distinct(embed, (text for pair in pairs for text in pair))
    cosines = np.array([cosine_matrix(vectors[first][None], vectors[second][None])[0, 0]
                        for first, second in pairs])
    predicted = (cosines + 1) / 2
    return {"spearman": metrics.spearman(gold, predicted),
            "pearson": metrics.pearson(gold, predicted),
            "pairs": len(pairs)}


@register_evaluator
class DialogueStsEvaluator(SentenceTaskEvaluator):
    name = "dsts"
    primary_metric = "spearman"
    headline = (("spearman", "Spearman"), ("pearson", "Pearson"))
    score = staticmethod(evaluate_dialogue_sts)
    read = staticmethod(read_correlated_pairs)
