"""Sentence-embedding SavedModel: strings in, pooled embeddings out (`--kind=sentence`).

Signature `serving_default`: `sentences` tf.string [None] -> `embeddings` float32 [None, H]; the
tokenizer and its vocabulary are inside the graph, so clients send raw text. Warm-up: each
sentence alone (the usual one-sentence request), then all of them in one request.
"""
from typing import Optional, Sequence

import numpy as np
import tensorflow as tf

from tfdialemb.inference.embedder import SentenceEmbedder
from tfdialemb.serving import layout
from tfdialemb.serving.kinds import ServedKind, register_servable

INPUT_NAME = "sentences"
OUTPUT_NAME = "embeddings"


def sentence_module(embedder: SentenceEmbedder) -> tf.Module:
    """The object to save, with its signature function as `serve`."""
    module = layout.encoder_module(embedder.encoder, embedder.tokenizer)

    @tf.function(autograph=False, input_signature=[tf.TensorSpec([None], tf.string, name=INPUT_NAME)])
    def serve(sentences):
        return {OUTPUT_NAME: embedder.embed_batch(sentences)}

    module.serve = serve
    return module


def warmup_records(sentences: Sequence[str]) -> list:
    """Serialized PredictionLogs: each sentence alone, then all of them in one request."""
    records = [layout.predict_log(layout.SIGNATURE_KEY,
                                  {INPUT_NAME: np.array(batch, dtype=object)})
               for batch in layout.each_then_all(sentences)]
    layout.check_record_count(records, f"{len(sentences)} warm-up sentences")
    return records


def sentence_servable(embedder: SentenceEmbedder, warmup_sentences: Sequence[str]) -> layout.Servable:
    """The serving module, its `serving_default` signature and the warm-up records."""
    records = warmup_records(warmup_sentences)
    module = sentence_module(embedder)
    return layout.Servable(module, {layout.SIGNATURE_KEY: module.serve}, records)


def export_sentence_model(embedder: SentenceEmbedder, export_dir: str,
                          warmup_sentences: Sequence[str], version: Optional[int] = None) -> str:
    """Writes `export_dir/<version>/` and returns its path (see `layout.write_version`)."""
    return layout.write_version(*sentence_servable(embedder, warmup_sentences), export_dir, version)


register_servable("sentence", ServedKind(
    "sentences", lambda runtime, settings, inputs: sentence_servable(runtime, inputs), one_request_per_input=True))
