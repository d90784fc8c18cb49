"""dial2vec dialogue-embedding SavedModel (`--kind=dialogue`; dial2vec paper Sec. 3.3).

Signatures cannot take RaggedTensors, so a batch of B dialogues travels flat:

  serving_default: turns        tf.string [N]  every dialogue's turns, concatenated in order;
                                               each needs a token (empty or blank refused)
                   turn_counts  int32 [B]      turns per dialogue (positive, summing to N;
                                               B = 0 gives empty outputs)
                   speakers     int32 [N]      each turn's speaker id, any non-negative integer:
                                               within a dialogue renumbered 0, 1, ... in order of
                                               first appearance, as training numbers speakers
                                               ([5, 7] is [0, 1]; [1, 1] is [0, 0]); negative refused
               ->  embeddings   float32 [B, H] the embedder's pooling: interlocutor pooling
                                               (Eq. 4), "mean" or "cls" (the trained model's
                                               `dialogue_pooling`, or the export's)
                   p1, p2, ...  float32 [B, H] each interlocutor's mean alone (Table 4)

Inside the graph the turns are tokenized and packed exactly as `DialogueEmbedder` packs them
(`[CLS] t_0 SEP t_1 ...`, [SEP] or [EOU], speaker-prefixed and closed by the separator when the
embedder is set so); speakers past the export's roles fold into the last
one. `dialogue_inputs` turns Dialogues into the three inputs. Warm-up: each dialogue alone, then
all of them in one request.
"""
from typing import Dict, Optional, Sequence

import numpy as np
import tensorflow as tf

from tfdialemb.dialogue import Dialogue, role_ids
from tfdialemb.inference.dialogue_embedder import DialogueEmbedder
from tfdialemb.layers.dialogue_views import POOLINGS
from tfdialemb.serving import layout
from tfdialemb.serving.kinds import ServedKind, register_servable

OUTPUT_NAME = "embeddings"


def dialogue_inputs(dialogues: Sequence[Dialogue]) -> Dict[str, np.ndarray]:
    """The signature's inputs for `dialogues`: flat turn texts, turn counts and role ids."""
    return {
        "turns": np.array([turn.text for d in dialogues for turn in d.turns], dtype=object),
        "turn_counts": np.array([len(d.turns) for d in dialogues], np.int32),
        "speakers": np.array([role for d in dialogues for role in role_ids(d)], np.int32),
    }


def dialogue_module(embedder: DialogueEmbedder, pooling: Optional[str] = None) -> tf.Module:
    """The object to save, with its signature function as `serve`; `pooling` one of POOLINGS
    (default: the embedder's) gives `embeddings`."""
    pooling = embedder.pooling if pooling is None else pooling
    if pooling not in POOLINGS:
        raise ValueError(f"dialogue pooling must be one of {POOLINGS}, got {pooling!r}")
    module = layout.encoder_module(embedder.encoder, embedder.tokenizer)
    interlocutors = [name for name in embedder.names if name not in POOLINGS]

    @tf.function(autograph=False, input_signature=[tf.TensorSpec([None], tf.string, name="turns"),
                                  tf.TensorSpec([None], tf.int32, name="turn_counts"),
                                  tf.TensorSpec([None], tf.int32, name="speakers")])
    def serve(turns, turn_counts, speakers):
        checks = [
            tf.debugging.assert_positive(
                turn_counts, message="turn_counts: every dialogue needs at least one turn"),
            # Named, so the error reads "x (turn_counts_sum:0) = [5] y (turns_given:0) = [6]".
            tf.debugging.assert_equal(
                tf.reduce_sum(turn_counts, name="turn_counts_sum"), tf.size(turns, name="turns_given"),
                message="turn_counts must sum to the number of turns"),
            tf.debugging.assert_equal(
                tf.size(speakers, name="speakers_given"), tf.size(turns, name="turns_given"),
                message="speakers must give one role id per turn"),
        ]
        with tf.control_dependencies(checks):
            row_lengths = tf.cast(turn_counts, tf.int64)
            views = embedder.embed_batch(tf.RaggedTensor.from_row_lengths(turns, row_lengths),
                                         tf.RaggedTensor.from_row_lengths(speakers, row_lengths))
        outputs = {OUTPUT_NAME: views[pooling]}
        outputs.update({name: views[name] for name in interlocutors})
        return outputs

    module.serve = serve
    return module


def warmup_records(dialogues: Sequence[Dialogue]) -> list:
    """Serialized PredictionLogs: each dialogue alone, then all of them in one request."""
    records = [layout.predict_log(layout.SIGNATURE_KEY, dialogue_inputs(batch))
               for batch in layout.each_then_all(dialogues)]
    layout.check_record_count(records, f"{len(dialogues)} warm-up dialogues")
    return records


def dialogue_servable(embedder: DialogueEmbedder, warmup_dialogues: Sequence[Dialogue],
                      pooling: Optional[str] = None) -> layout.Servable:
    """The serving module, its `serving_default` signature and the warm-up records."""
    records = warmup_records(warmup_dialogues)
    module = dialogue_module(embedder, pooling)
    return layout.Servable(module, {layout.SIGNATURE_KEY: module.serve}, records)


def export_dialogue_model(embedder: DialogueEmbedder, export_dir: str,
                          warmup_dialogues: Sequence[Dialogue], pooling: Optional[str] = None,
                          version: Optional[int] = None) -> str:
    """Writes `export_dir/<version>/` and returns its path (see `layout.write_version`)."""
    return layout.write_version(*dialogue_servable(embedder, warmup_dialogues, pooling),
                                export_dir, version)


register_servable("dialogue", ServedKind(
    "dialogues", lambda runtime, settings, inputs: dialogue_servable(runtime, inputs), one_request_per_input=True))
