"""Response-selection SavedModel of a trained cross-encoder (`--kind=selection`; FGC Eq. 1).

Signatures cannot take RaggedTensors, so contexts travel as flat turns:

  serving_default: turns        tf.string [N]  every pair's context turns, concatenated in order
                   turn_counts  int32 [B]      context turns per pair (summing to N; 0 allowed)
                   responses    tf.string [B]  each pair's response
               ->  probabilities float32 [B]   σ(W s_[CLS] + b) of each pair
  rank:            turns        tf.string [n]  one context
                   candidates   tf.string [C]  its candidate responses
               ->  scores       float32 [C]    each candidate's probability, for ranking

Every text (turn, response, candidate) needs a token: an empty or blank one is refused with an
error naming the input (`require_tokens`, the rule of every served text). An empty batch (B or
C = 0) gives an empty output.

Tokenization, [EOT] insertion and the context's left truncation happen inside the graph exactly
as `PairScorer` does them. Warm-up: each warm-up dialogue's last turn as the response to the
turns before it, alone and then all together, and one `rank` request per dialogue over every
dialogue's last turn.
"""
from typing import Dict, Sequence

import numpy as np
import tensorflow as tf

from tfdialemb.dialogue import Dialogue
from tfdialemb.inference.pair_scorer import SIGNATURE, PairScorer
from tfdialemb.serving import layout
from tfdialemb.serving.kinds import ServedKind, register_servable

RANK_SIGNATURE = "rank"


def pair_inputs(dialogues: Sequence[Dialogue]) -> Dict[str, np.ndarray]:
    """serving_default's inputs: each dialogue's last turn as the response to the turns before it."""
    return {"turns": np.array([t.text for d in dialogues for t in d.turns[:-1]], dtype=object),
            "turn_counts": np.array([len(d.turns) - 1 for d in dialogues], np.int32),
            "responses": np.array([d.turns[-1].text for d in dialogues], dtype=object)}


def selection_module(scorer: PairScorer) -> tf.Module:
    """The object to save (tokenizer, encoder and head variables) with `serve` and `rank`."""
    module = layout.encoder_module(scorer.model.encoder, scorer.tokenizer)
    module.head_variables = list(scorer.model.selection.variables)

    @tf.function(autograph=False, input_signature=SIGNATURE)
    def serve(turns, turn_counts, responses):
        return {"probabilities": scorer.score_batch(turns, turn_counts, responses)}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="turns"),
                                  tf.TensorSpec([None], tf.string, name="candidates")], autograph=False)
    def rank(turns, candidates):
        return {"scores": scorer.rank_batch(turns, candidates)}

    module.serve, module.rank = serve, rank
    return module


def warmup_records(dialogues: Sequence[Dialogue]) -> list:
    """Serialized PredictionLogs for both signatures."""
    usable = [d for d in dialogues if len(d.turns) >= 2]
    if not usable:
        raise ValueError("the warm-up dialogues need at least two turns each")
    records = [layout.predict_log(layout.SIGNATURE_KEY, pair_inputs(batch))
               for batch in layout.each_then_all(usable)]
    candidates = np.array([d.turns[-1].text for d in usable], dtype=object)
    records += [layout.predict_log(RANK_SIGNATURE, {"turns": np.array([t.text for t in d.turns[:-1]], dtype=object),
                                                    "candidates": candidates}) for d in usable]
    layout.check_record_count(records, f"{len(usable)} warm-up dialogues")
    return records


def selection_servable(scorer: PairScorer, warmup_dialogues: Sequence[Dialogue]) -> layout.Servable:
    """The serving module, its two signatures and the warm-up records."""
    records = warmup_records(warmup_dialogues)
    module = selection_module(scorer)
    return layout.Servable(module, {layout.SIGNATURE_KEY: module.serve, RANK_SIGNATURE: module.rank}, records)


register_servable("selection", ServedKind(
    "dialogues", lambda runtime, settings, inputs: selection_servable(runtime, inputs)))
