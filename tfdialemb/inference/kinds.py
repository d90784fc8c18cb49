"""The runtime of each inference kind, and `load`: a model directory opened as one of them.

The kinds, their settings and defaults are `tfdialemb.inference_kinds.KINDS`; this table adds
the class that computes each (`tfdialemb.serving.kinds` adds the SavedModel that serves it).
"""
import os
from typing import Any, Mapping, Optional, Union

from tfdialemb.inference.context_response import ContextResponseEncoder
from tfdialemb.inference.dialogue_embedder import DialogueEmbedder
from tfdialemb.inference.embedder import SentenceEmbedder
from tfdialemb.inference.pair_scorer import PairScorer
from tfdialemb.model_dir import ModelSource

RUNTIMES = {
    "sentence": SentenceEmbedder,
    "dialogue": DialogueEmbedder,
    "curved": SentenceEmbedder,
    "selection": PairScorer,
    "context_response": ContextResponseEncoder,
}
"""Kind → the class whose `from_settings(model or encoder, tokenizer, settings, ...)` computes it
(the curved kind's triple-encoder / CCL scores are computed from its sentence embeddings)."""


def load(source: Union[ModelSource, str, os.PathLike], kind: str, given: Optional[Mapping[str, Any]] = None,
         **options):
    """The `kind` runtime of `source` (a ModelSource or a directory) with the settings it records,
    `given` ones applied as the commands apply their flags; `options` go to `from_settings`
    (e.g. `normalize`, `hidden_layers`)."""
    if not isinstance(source, ModelSource):
        source = ModelSource(source)
    return runtime(source, kind, source.settings(kind, dict(given or {})), **options)


def runtime(source: ModelSource, kind: str, settings: Mapping[str, Any], **options):
    """The `kind` runtime of `source` with `settings` already resolved (`ModelSource.settings`)."""
    return RUNTIMES[kind].from_settings(*source.serving_parts(kind), settings, **options)
