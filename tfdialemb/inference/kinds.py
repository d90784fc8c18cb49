"""The runtime of each inference kind, and `load`: a model directory opened as one of them.

The kinds, their settings and defaults are `tfdialemb.inference_kinds`; this table adds the class
that serves each. A kind that needs a trained head (`HEAD_KINDS`) is built from the method's
rebuilt model, any other from the encoder alone, so any checkpoint serves it.
"""
import os
from typing import Any, Mapping, Optional, Union

from tfdialemb.inference.context_response import ContextResponseEncoder
from tfdialemb.inference.dialogue_embedder import DialogueEmbedder
from tfdialemb.inference.embedder import SentenceEmbedder
from tfdialemb.inference.pair_scorer import PairScorer
from tfdialemb.methods.spec import HEAD_KINDS
from tfdialemb.model_dir import ModelSource

RUNTIMES = {
    "sentence": SentenceEmbedder,
    "dialogue": DialogueEmbedder,
    "triple": SentenceEmbedder,
    "selection": PairScorer,
    "context_response": ContextResponseEncoder,
}
"""Kind → the class whose `from_settings(model or encoder, tokenizer, settings, ...)` serves it
(the triple-encoder's scores are computed from its sentence embeddings)."""


def load(source: Union[ModelSource, str, os.PathLike], kind: str, given: Optional[Mapping[str, Any]] = None,
         **options):
    """The `kind` runtime of `source` (a ModelSource or a directory) with the settings it records,
    `given` ones applied as the commands apply their flags; `options` go to `from_settings`
    (e.g. `normalize`, `hidden_layers`)."""
    if not isinstance(source, ModelSource):
        source = ModelSource(source)
    settings = source.settings(kind, dict(given or {}))
    if kind in HEAD_KINDS:
        model, tokenizer = source.trained.model, source.trained.tokenizer
    else:
        model, tokenizer = source.pretrained.encoder, source.pretrained.tokenizer
    return RUNTIMES[kind].from_settings(model, tokenizer, settings, **options)
