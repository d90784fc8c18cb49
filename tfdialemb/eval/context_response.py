"""In-batch accuracy@k of a context-response model on a dialogue file (augmentation thesis, appendix
1.1: accuracy@5 of 0.955 within batches of 128).

Pairs are drawn as training draws them (`tfdialemb.data.context_response_pairs`, after the released
`ContextResponseDataset`): one per dialogue, the response at position k uniform in [1, n - 2]
(k = 1 in a two-utterance dialogue), its context the utterances before it, of which the encoder
keeps the last `context`; k comes from a generator seeded by (seed, dialogue index), so a file and
seed always give the same pairs. Consecutive pairs in file order form batches of `batch_size`;
within a batch each context ranks every response of the batch (`top_k_hits`: ties against the
true response, a NaN score a miss). As the released `all_accuracies`, accuracy@k leaves out
batches of at most k pairs, where it would be trivially 1; a set or batch size that leaves no
batch of more than k pairs has no accuracy@k and is refused (`check_batches`).
"""
from typing import Dict, List, Sequence, Tuple

import numpy as np

from tfdialemb.dialogue import drop_short, merge_consecutive_turns, read_dialogues
from tfdialemb.eval.evaluator import Evaluator, register_evaluator
from tfdialemb.core.options import Option

KS = (1, 5)


def context_response_pairs(path: str, seed: int = 0, merge_turns: bool = True) -> Tuple[List[List[str]], List[str]]:
    """(contexts, responses) of the dialogues of `path` with at least 2 turns (after merging a
    speaker's consecutive turns with `merge_turns`, as the training build does), one pair each."""
    dialogues = read_dialogues(path)
    if merge_turns:
        dialogues = map(merge_consecutive_turns, dialogues)
    contexts, responses = [], []
    for index, dialogue in enumerate(drop_short(dialogues, 2)):
        texts = [turn.text for turn in dialogue.turns]
        position = 1 + int(np.random.default_rng([seed, index]).integers(max(len(texts) - 2, 1)))
        contexts.append(texts[:position])
        responses.append(texts[position])
    return contexts, responses


def check_batches(path: str, pairs: int, batch_size: int, ks: Sequence[int] = KS) -> None:
    """ValueError when `pairs` pairs in batches of `batch_size` give no batch of more than k pairs
    for some k of `ks`, so accuracy@k would be undefined."""
    largest = min(pairs, batch_size)
    undefined = [k for k in ks if largest <= k]
    if undefined:
        raise ValueError(f"{path}: {pairs} context-response pair(s) (one per dialogue of at least 2 utterances) "
                         f"in batches of {batch_size} leave no batch of more than {max(undefined)} pairs, which "
                         f"accuracy@{max(undefined)} ranks among; give more dialogues"
                         + (" or larger batches" if batch_size <= max(undefined) else ""))


def in_batch_accuracy(contexts: np.ndarray, responses: np.ndarray, batch_size: int,
                      ks: Sequence[int] = KS) -> Dict[str, float]:
    """{"accuracy@k": mean over pairs of batches larger than k} of unit vectors `contexts` and
    `responses` [N, d], pair i = (contexts[i], responses[i]), in consecutive batches (every k
    needs such a batch: `check_batches`)."""
    from tfdialemb.losses.ranking_metrics import top_k_hits  # pylint: disable=import-outside-toplevel

    hits = {k: [] for k in ks}
    for start in range(0, len(contexts), batch_size):
        scores = contexts[start:start + batch_size] @ responses[start:start + batch_size].T
        labels = np.arange(len(scores))
        for k in ks:
            if len(scores) > k:
                hits[k].extend(top_k_hits(scores, labels, k).numpy())
    return {f"accuracy@{k}": float(np.mean(hits[k], dtype=np.float64)) for k in ks}


def evaluate_context_response(path: str, encoder, batch_size: int = 128, seed: int = 0,
                              merge_turns: bool = True) -> Dict[str, float]:
    """{"accuracy@1", "accuracy@5", "pairs", "batches"} of `encoder` (a `ContextResponseEncoder`)
    on the dialogue file `path`."""
    if batch_size < 2:
        raise ValueError(f"in-batch accuracy needs batches of at least 2 pairs, got {batch_size}")
    contexts, responses = context_response_pairs(path, seed, merge_turns)
    check_batches(path, len(contexts), batch_size)
    report = in_batch_accuracy(encoder.embed_contexts(contexts), encoder.embed_responses(responses), batch_size)
    return {**report, "pairs": len(contexts), "batches": -(-len(contexts) // batch_size)}


@register_evaluator
class ContextResponseEvaluator(Evaluator):
    """`context_response`: in-batch accuracy@1 and @5 of a trained context-response model's
    projections, one (context, response) pair per dialogue drawn as training draws them."""

    name = "context_response"
    kind = "context_response"
    options = (Option("pairs_per_batch", 128, "Pairs per batch, each context ranking every response of its "
                      "batch (the thesis: 128).", lower_bound=2),
               Option("pair_seed", 0, "Seed of the response drawn from each dialogue."))
    primary_metric = "accuracy@5"
    headline = (("accuracy@1", "accuracy@1"), ("accuracy@5", "accuracy@5"))

    def __call__(self, source, eval_file, options):
        encoder = source.runtime(self.kind)
        merge = source.settings["merge_consecutive_turns"]
        source.embedding.update(context=encoder.context, max_length=encoder.max_length, merge_consecutive_turns=merge)
        metrics = evaluate_context_response(eval_file, encoder, batch_size=options.pairs_per_batch,
                                            seed=options.pair_seed, merge_turns=merge)
        return {"embedding": source.embedding, "metrics": metrics}

    def validation(self, eval_file, settings, options):
        merge = settings["merge_consecutive_turns"]
        contexts, _ = context_response_pairs(eval_file, options.seed, merge)
        check_batches(eval_file, len(contexts), options.batch_size)
        return lambda runtime: evaluate_context_response(eval_file, runtime, batch_size=options.batch_size,
                                                         seed=options.seed, merge_turns=merge)
