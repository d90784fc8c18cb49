r"""Multi-turn response selection (FGC Sec. 5): rank each context's candidates by the model's score.

The set is an Ubuntu V1 / Douban test file in its released text form (`label \t u_1 ... \t
response`, cut into blocks of `block_size` lines by position and checked as the converters do,
`tfdialemb.converters.response_selection`) or the canonical JSONL the converters write, where
consecutive lines with the same `labels.context_id` form one block (Ubuntu: 10 candidates, one
positive; Douban: 10 candidates, human labels, so several positives or none). A block of a single
candidate has nothing to rank it against and is refused, and so is a block without a positive
whose context is the block's before it: the rest of a longer block cut by too small a
--block_size (read from text, or converted so), which would otherwise count as a block without a
positive, and a set where no block holds both a positive and a negative (each block would score
1 or 0 whatever the scores). Metrics per block, averaged over blocks,
as taesunwhang/UMS-ResSel models/utils/scorer.py computes them (the scorer of SMN and of the
BERT-DPT/UMS baselines FGC compares with):
  - r10@k: the share of the block's positives ranked in the top k (one positive: 1[rank ≤ k]);
  - r2@1: the same at k = 1 among the block's first two candidates (Ubuntu lists the positive
    first, so this is its one positive against the first negative); blocks whose first two
    candidates hold no positive, or no negative, are left out of it;
  - map, mrr, p@1: average precision, reciprocal rank of the first positive, a positive on top.
Blocks without a positive have no defined value: left out by default, as UMS-ResSel does, and
counted in the report (`empty_blocks`); `keep_empty_blocks` counts each as 0 for every metric. The
report says how many blocks were scored of how many were read (`scored_blocks`, `blocks`) and how
many candidates they held (`block_sizes`). Ties rank pessimistically and a NaN score is a miss
(`tfdialemb.eval.metrics`); UMS-ResSel's stable sort keeps file order, which lets a model that
scores every candidate alike look perfect on Ubuntu.

`evaluate_pair_similarity` is FGC's Table 7 analysis: the instance-level similarity, the mean
cosine between the representations of pairs that share a context (every two candidates of a
block), and the category-level similarity, the mean cosine between every positive pair and every
negative pair of the set.
"""
import collections
import dataclasses
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from tfdialemb.converters.response_selection import BLOCK_SIZE, convert_response_selection
from tfdialemb.dialogue import DialogueFormatError
from tfdialemb.eval import metrics
from tfdialemb.eval.evaluator import Evaluator, register_evaluator
from tfdialemb.eval.inputs import is_jsonl, read_eval_records
from tfdialemb.core.options import Option

RECALL_AT = (1, 2, 5)
CUT_OFFS = {f"r10@{k}": k for k in RECALL_AT}
Score = Callable[[Sequence[Sequence[str]], Sequence[str]], np.ndarray]
"""(contexts as lists of turns, responses) in, one score per pair out."""
Represent = Callable[[Sequence[Sequence[str]], Sequence[str]], Dict[str, np.ndarray]]
"""(contexts, responses) in, {view: one vector per pair} out."""


@dataclasses.dataclass(frozen=True)
class Block:
    context: Tuple[str, ...]
    candidates: Tuple[str, ...]
    labels: Tuple[int, ...]


def read_blocks(path: str, block_size: Optional[int] = None) -> List[Block]:
    """The candidate blocks of a response-selection set, in file order; a released text file is cut
    into blocks of `block_size` lines (default BLOCK_SIZE's 10), a JSONL one by `context_id`."""
    if is_jsonl(path) and block_size is not None:
        raise ValueError(f"{path}: a converted file records its blocks in labels.context_id; --block_size "
                         "applies to a released text file")
    size = BLOCK_SIZE.default if block_size is None else block_size
    blocks: List[Block] = []
    current, seen, first_lines = None, set(), []
    for line, record in read_eval_records(path, lambda source, errors: convert_response_selection(source, errors, size)):
        labels = record.labels
        context_id = labels.get("context_id")
        if (labels.get("label") not in (0, 1) or not isinstance(context_id, (int, str)) or isinstance(context_id, bool)
                or len(record.turns) < 2):
            raise DialogueFormatError(path, line, "a response-selection record has context turns, the "
                                      "candidate as its last turn and labels `label` (0/1) and `context_id` "
                                      "(an integer or string)")
        context = tuple(t.text for t in record.turns[:-1])
        if current is None or current[0] != labels["context_id"]:
            if labels["context_id"] in seen:
                raise DialogueFormatError(path, line, f"context_id {labels['context_id']} was used by an "
                                          "earlier block; a block's lines are consecutive")
            seen.add(labels["context_id"])
            current = (labels["context_id"], context, [], [])
            blocks.append(current)
            first_lines.append(line)
        elif current[1] != context:
            raise DialogueFormatError(path, line, f"context_id {labels['context_id']} names another context "
                                      "than the lines before it")
        current[2].append(record.turns[-1].text)
        current[3].append(labels["label"])
    if not blocks:
        raise ValueError(f"{path}: no candidate block")
    for line, (before, block) in zip(first_lines[1:], zip(blocks, blocks[1:])):
        if not any(block[3]) and block[1] == before[1]:
            raise DialogueFormatError(path, line, f"context_id {block[0]} has no positive and the context of "
                                      f"context_id {before[0]} before it: the rest of a longer block, as a converter "
                                      "cutting a file with a --block_size smaller than its blocks writes; convert it "
                                      "again with --block_size=N, N its candidates per context")
    single = [f"line {line}" for line, block in zip(first_lines, blocks) if len(block[2]) < 2]
    if single:
        raise ValueError(f"{path}: {len(single)} of {len(blocks)} blocks hold a single candidate "
                         f"({', '.join(single[:5])}{', ...' if len(single) > 5 else ''}), which has nothing to be "
                         "ranked against; response selection needs at least 2 candidates per context (the "
                         "released test files have 10)")
    return [Block(context, tuple(candidates), tuple(block_labels))
            for _, context, candidates, block_labels in blocks]


def block_metrics(scores: np.ndarray, labels: np.ndarray) -> Dict[str, float]:
    """The metrics of one block with at least one positive."""
    values = {f"r10@{k}": metrics.recall_at_k(scores, labels, k) for k in RECALL_AT}
    values.update(map=metrics.average_precision(scores, labels), mrr=metrics.reciprocal_rank(scores, labels),
                  **{"p@1": metrics.precision_at_k(scores, labels, 1)})
    return values


def evaluate_response_selection(path: str, score: Score, keep_empty_blocks: bool = False,
                                block_size: Optional[int] = None) -> Dict[str, object]:
    """{metric: mean over blocks, "blocks", "scored_blocks", "empty_blocks", "block_sizes",
    "r2_blocks"} on the set at `path` (`read_blocks`); r2@1 is None when no block qualifies for it,
    r10@k when no block with a positive has more than k candidates (all in the top k, it is 1 for
    every model)."""
    blocks = read_blocks(path, block_size)
    if not any(0 < sum(b.labels) < len(b.labels) for b in blocks):
        lacking = ("has a positive candidate" if not any(any(b.labels) for b in blocks)
                   else "holds both a positive and a negative candidate")
        raise ValueError(f"{path}: no block {lacking}, so every block scores alike whatever the model's scores")
    contexts = [list(b.context) for b in blocks for _ in b.candidates]
    responses = [c for b in blocks for c in b.candidates]
    scores = np.asarray(score(contexts, responses), np.float64)
    if scores.shape != (len(responses),):
        raise ValueError(f"the scorer returned shape {scores.shape} for {len(responses)} pairs")
    totals: Dict[str, List[float]] = {}
    empty, pairwise = 0, []
    start = 0
    for block in blocks:
        block_scores = scores[start:start + len(block.candidates)]
        start += len(block.candidates)
        labels = np.asarray(block.labels)
        if labels.any():
            values = block_metrics(block_scores, labels)
        else:
            empty += 1
            if not keep_empty_blocks:
                continue
            values = dict.fromkeys([f"r10@{k}" for k in RECALL_AT] + ["map", "mrr", "p@1"], 0.0)
        for name, value in values.items():
            totals.setdefault(name, []).append(value)
        if len(labels) >= 2 and labels[:2].any() and not labels[:2].all():
            pairwise.append(metrics.recall_at_k(block_scores[:2], labels[:2], 1))
    largest = max(len(block.candidates) for block in blocks if any(block.labels))
    report: Dict[str, object] = {name: float(np.mean(values)) if CUT_OFFS.get(name, 0) < largest else None
                                 for name, values in totals.items()}
    report["r2@1"] = float(np.mean(pairwise)) if pairwise else None
    report.update(blocks=len(blocks), scored_blocks=len(blocks) - (0 if keep_empty_blocks else empty),
                  empty_blocks=empty, empty_blocks_kept=keep_empty_blocks, block_sizes=_sizes(blocks),
                  r2_blocks=len(pairwise))
    return report


def _sizes(blocks: Sequence[Block]) -> Dict[str, int]:
    """{candidates per block: how many blocks}, smallest first (JSON keys are strings)."""
    counts = collections.Counter(len(block.candidates) for block in blocks)
    return {str(size): counts[size] for size in sorted(counts)}


def evaluate_pair_similarity(path: str, represent: Represent, block_size: Optional[int] = None) -> Dict[str, object]:
    """{view: {"ins_similarity", "cat_similarity"}} of the pairs of the set at `path` (FGC Table 7,
    `read_blocks`), with the pair counts they average over."""
    blocks = read_blocks(path, block_size)
    contexts = [list(b.context) for b in blocks for _ in b.candidates]
    responses = [c for b in blocks for c in b.candidates]
    labels = np.array([label for b in blocks for label in b.labels])
    sizes = [len(b.candidates) for b in blocks]
    views = {}
    for view, vectors in represent(contexts, responses).items():
        unit = np.asarray(vectors, np.float64)
        unit = unit / np.maximum(np.linalg.norm(unit, axis=1, keepdims=True), 1e-12)
        same_context, pairs, start = 0.0, 0, 0
        for size in sizes:
            block = unit[start:start + size]
            start += size
            summed = block.sum(axis=0)
            same_context += (summed @ summed - size) / 2  # Σ_{i<j} cos(i, j)
            pairs += size * (size - 1) // 2
        positives, negatives = unit[labels == 1], unit[labels == 0]
        cross = float(positives.sum(axis=0) @ negatives.sum(axis=0)) if len(positives) and len(negatives) else None
        views[view] = {
            "ins_similarity": same_context / pairs if pairs else None,
            "cat_similarity": cross / (len(positives) * len(negatives)) if cross is not None else None,
        }
    return {"views": views, "blocks": len(blocks), "same_context_pairs": sum(n * (n - 1) // 2 for n in sizes),
            "positive_pairs": int(labels.sum()), "negative_pairs": int((labels == 0).sum())}


class PairTaskEvaluator(Evaluator):
    """A trained cross-encoder (an `fgc` model's head, its recorded --pair_layout) over each context's
    block of candidates."""

    kind = "selection"
    runtime_method = ""
    """The PairScorer method run over the pairs: score or represent."""

    def pairs(self, source, options):
        """run_pairs(contexts, responses) with the model's runtime, loaded when first called."""
        def run_pairs(contexts, responses):
            scorer = source.runtime(self.kind)
            source.embedding.update(pair_layout=source.settings["pair_layout"], max_length=scorer.max_length)
            return getattr(scorer, self.runtime_method)(contexts, responses, batch_size=options.batch_size,
                                                        on_batch=source.progress(len(responses), "pairs"))
        return run_pairs

    @staticmethod
    def block_size(options) -> Optional[int]:
        """--block_size when given; else a converted file's blocks, or the released files' 10."""
        return options.block_size if BLOCK_SIZE.name in options.given else None


@register_evaluator
class ResponseSelectionEvaluator(PairTaskEvaluator):
    """`response_selection`: r10@1, r10@2, r10@5, r2@1, map, mrr, p@1 of the scores of each block's
    candidates; blocks without a positive are left out and counted unless --keep_empty_blocks."""

    name = "response_selection"
    options = (BLOCK_SIZE, Option("keep_empty_blocks", False, "Score candidate blocks without a positive as 0 "
                                  "instead of leaving them out (as taesunwhang/UMS-ResSel does)."))
    runtime_method = "score"
    primary_metric = "r10@1"
    headline = (("r10@1", "R10@1"), ("r10@2", "R10@2"), ("r10@5", "R10@5"), ("r2@1", "R2@1"), ("map", "MAP"),
                ("mrr", "MRR"), ("p@1", "P@1"))

    def __call__(self, source, eval_file, options):
        metrics = evaluate_response_selection(eval_file, self.pairs(source, options),
                                              keep_empty_blocks=options.keep_empty_blocks,
                                              block_size=self.block_size(options))
        return {"embedding": source.embedding, "metrics": metrics}


@register_evaluator
class PairSimilarityEvaluator(PairTaskEvaluator):
    """`fgc_similarity`, FGC's Table 7: the mean cosine of the pair representations (s_[CLS] and the
    projection z) between candidates of one context (Ins, lower: the candidates told apart) and
    between all positive and all negative pairs (Cat)."""

    name = "fgc_similarity"
    options = (BLOCK_SIZE,)
    runtime_method = "represent"
    primary_metric = "ins_similarity"
    greater_is_better = False
    lower_is_better = ("*_similarity",)
    headline = (("ins_similarity", "Ins"), ("cat_similarity", "Cat"))
    per_view = "views"

    def __call__(self, source, eval_file, options):
        metrics = evaluate_pair_similarity(eval_file, self.pairs(source, options), self.block_size(options))
        return {"embedding": source.embedding, "metrics": metrics}
