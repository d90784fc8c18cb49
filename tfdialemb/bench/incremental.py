"""Per-turn latency of incremental triple-encoder scoring against re-encoding the history.

At each history length h, one turn is: the newest utterance arrives and C pre-encoded candidates
are scored as the next utterance. `SequenceScorer.add` + `score` encodes only the newest
utterance and updates the cached rows (triple-encoders Sec. 4.1); `score_from_scratch` re-encodes all h
utterances with their current speaker tokens and recomputes Eq. 3 (or MaxSim / the bi-encoder
sum). Both paths must give the same scores; the benchmark checks that at every length.

Utterances are the demo corpus's turns in order: a history longer than one demo dialogue (4-14
turns) runs on through the next dialogues, and the candidates are the turns after the longest
history. Each timed incremental turn needs a scorer holding exactly h - 1 utterances, so
`warmup + steps` scorers grow side by side and each times one turn per length.
"""
from typing import Dict, List, Optional, Sequence

import numpy as np

from tfdialemb.bench.demo_data import demo_utterances
from tfdialemb.bench.timing import time_alternating

SCORE_RTOL = 1e-4
"""Relative agreement required between the two paths: both sum float32 embeddings in float64,
but the encoder sees different batches (one utterance's variants vs the whole history)."""


def bench_incremental(checkpoint: str, history_lengths: Sequence[int] = (5, 20, 50),
                      candidates: int = 100, mode: str = "c3l", k_last_rows: Optional[int] = None,
                      steps: int = 5, warmup: int = 1, max_length: int = 128, seed: int = 0) -> Dict:
    """ms per turn, incremental vs re-encoding, at each history length; raises AssertionError if
    the two paths score the candidates differently."""
    # pylint: disable=import-outside-toplevel
    from tfdialemb.encoders.checkpoint import load_pretrained
    from tfdialemb.inference.sequence_scorer import SequenceScorer, check_mode
    from tfdialemb.inference.embedder import SentenceEmbedder

    check_mode(mode, k_last_rows)
    lengths = sorted(set(history_lengths))
    if not lengths or lengths[0] < 1:
        raise ValueError(f"history_lengths must be positive integers, got {list(history_lengths)}")
    if candidates < 1 or steps < 1 or warmup < 0:
        raise ValueError(f"need candidates >= 1, steps >= 1 and warmup >= 0; got {candidates}, "
                         f"{steps} and {warmup}")
    utterances = demo_utterances(lengths[-1] + candidates, seed)
    history, candidate_texts = utterances[:lengths[-1]], utterances[lengths[-1]:]
    embedder = SentenceEmbedder.from_pretrained(load_pretrained(checkpoint), pooling="mean",
                                                max_length=max_length)
    scorers = [SequenceScorer(embedder.embed, mode, k_last_rows) for _ in range(warmup + steps)]
    candidate_vectors = scorers[0].encode_candidates(candidate_texts)
    rows = []
    for length in lengths:
        for scorer in scorers:
            for utterance in history[len(scorer.history):length - 1]:
                scorer.add(utterance)
        rows.append(_time_turn(scorers, history[:length], candidate_vectors, steps, warmup))
    return {
        "method": "c3l",
        "mode": mode,
        "k_last_rows": k_last_rows,
        "candidates": candidates,
        "hidden": embedder.encoder.encoder_config.hidden_size,
        "layers": embedder.encoder.encoder_config.num_layers,
        "steps": steps,
        "lengths": rows,
    }


def _time_turn(scorers, history: List[str], candidate_vectors: np.ndarray, steps: int,
               warmup: int) -> Dict:
    """Times the turn that brings each scorer (holding all of `history` but the last utterance)
    to `history`, and re-encoding `history`; checks that the two paths agree."""
    waiting = iter(scorers)
    incremental_scores, scratch_scores = [], []

    def incremental_turn():
        scorer = next(waiting)
        scorer.add(history[-1])
        incremental_scores.append(scorer.score(candidate_vectors))

    def reencode_turn():
        scratch_scores.append(scorers[0].score_from_scratch(history, candidate_vectors))

    incremental_s, scratch_s = time_alternating(incremental_turn, reencode_turn, steps, warmup)
    reference = scratch_scores[-1]
    np.testing.assert_allclose(
        incremental_scores, np.broadcast_to(reference, np.shape(incremental_scores)),
        rtol=SCORE_RTOL, atol=SCORE_RTOL * float(np.max(np.abs(reference))),
        err_msg=f"incremental and re-encoded scores differ at history length {len(history)}")
    return {
        "history_length": len(history),
        "incremental_ms_per_turn": incremental_s * 1000,
        "reencode_ms_per_turn": scratch_s * 1000,
        "reencode_vs_incremental": scratch_s / incremental_s,
        "max_abs_score_difference": float(np.max(np.abs(np.subtract(incremental_scores, reference)))),
    }


def format_report(report: Dict) -> str:
    rows = "full triangle" if report["k_last_rows"] is None else f"last {report['k_last_rows']} rows"
    lines = [
        f"{report['mode']} scoring ({rows}), {report['candidates']} pre-encoded candidates, encoder "
        f"{report['layers']} layers x {report['hidden']}; median of {report['steps']} turns",
        "  history   incremental   re-encode   re-encode / incremental",
    ]
    lines += [
        f"  {row['history_length']:7d}   {row['incremental_ms_per_turn']:8.1f} ms "
        f"{row['reencode_ms_per_turn']:8.1f} ms   {row['reencode_vs_incremental']:8.1f}x"
        for row in report["lengths"]
    ]
    lines.append("  both paths give the same scores (max |difference| "
                 f"{max(row['max_abs_score_difference'] for row in report['lengths']):.1e})")
    return "\n".join(lines)
