"""Context-response SavedModel of a trained context-response model (`--kind=context_response`; the
augmentation thesis, appendix 1.1): unit context and response vectors whose dot product is the
model's similarity.

Signatures cannot take RaggedTensors, so contexts travel as flat turns:

  serving_default: turns        tf.string [N]  every context's utterances, oldest first, concatenated
                   turn_counts  int32 [B]      utterances per context, 1 to the recorded `context`
               ->  embeddings   float32 [B, P] the context projections
  responses:       responses    tf.string [B]
               ->  embeddings   float32 [B, P] the response projections

Every text (utterance, response) needs a token: an empty or blank one is refused with an error
naming the input (`require_tokens`, the rule of every served text). An empty batch gives an
empty output.

Tokenization and the slot layout happen inside the graph exactly as `ContextResponseEncoder` does
them; a client keeps the last `context` utterances of a longer context. Warm-up: each warm-up
dialogue's last utterances before its last turn as a context, alone and then all together, and its
last turn as a response, likewise.
"""
from typing import Sequence

import numpy as np
import tensorflow as tf

from tfdialemb.dialogue import Dialogue
from tfdialemb.inference.context_response import CONTEXT_SIGNATURE, RESPONSE_SIGNATURE, ContextResponseEncoder
from tfdialemb.serving import layout
from tfdialemb.serving.kinds import ServedKind, register_servable

RESPONSES_SIGNATURE = "responses"
OUTPUT_NAME = "embeddings"


def context_response_module(encoder: ContextResponseEncoder) -> tf.Module:
    """The object to save (tokenizer, encoder and projector variables) with `serve` and `responses`."""
    module = layout.encoder_module(encoder.model.encoder, encoder.tokenizer)
    module.projector_variables = list(encoder.model.context_projector.variables
                                      + encoder.model.response_projector.variables)

    @tf.function(autograph=False, input_signature=CONTEXT_SIGNATURE)
    def serve(turns, turn_counts):
        return {OUTPUT_NAME: encoder.context_batch(turns, turn_counts)}

    @tf.function(autograph=False, input_signature=RESPONSE_SIGNATURE)
    def responses(texts):
        return {OUTPUT_NAME: encoder.response_batch(texts)}

    module.serve, module.responses = serve, responses
    return module


def warmup_records(dialogues: Sequence[Dialogue], context: int) -> list:
    """Serialized PredictionLogs for both signatures."""
    usable = [d for d in dialogues if len(d.turns) >= 2]
    if not usable:
        raise ValueError("the warm-up dialogues need at least two turns each")
    records = []
    for batch in layout.each_then_all(usable):
        kept = [[t.text for t in d.turns[:-1]][-context:] for d in batch]
        records.append(layout.predict_log(layout.SIGNATURE_KEY, {
            "turns": np.array([text for texts in kept for text in texts], dtype=object),
            "turn_counts": np.array([len(texts) for texts in kept], np.int32)}))
        records.append(layout.predict_log(RESPONSES_SIGNATURE, {
            "responses": np.array([d.turns[-1].text for d in batch], dtype=object)}))
    layout.check_record_count(records, f"{len(usable)} warm-up dialogues")
    return records


def context_response_servable(encoder: ContextResponseEncoder, warmup_dialogues: Sequence[Dialogue]) -> layout.Servable:
    """The serving module, its two signatures and the warm-up records."""
    records = warmup_records(warmup_dialogues, encoder.context)
    module = context_response_module(encoder)
    return layout.Servable(module, {layout.SIGNATURE_KEY: module.serve, RESPONSES_SIGNATURE: module.responses},
                           records)


register_servable("context_response", ServedKind(
    "dialogues", lambda runtime, settings, inputs: context_response_servable(runtime, inputs)))
