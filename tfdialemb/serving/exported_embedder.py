"""Sentence embeddings from an exported SavedModel (`python -m tfdialemb.export --kind=sentence`).

The graph was traced at export, tokenizer included, so nothing is traced or built here: loading it
skips the encoder's construction, weight assignment and tracing that a checkpoint needs.
"""
from typing import Callable, Optional, Sequence

import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the tokenizer's ops the graph holds)

from tfdialemb.inference.embedder import embed_by_length
from tfdialemb.core.precision import exported_policy
from tfdialemb.serving import layout
from tfdialemb.serving.sentence import INPUT_NAME, OUTPUT_NAME
from tfdialemb.core.similarity import l2_normalized


class ExportedSentenceEmbedder:
    """Strings in, embeddings out, through a sentence SavedModel's `serving_default` signature.

    `path` is a version directory or an export directory (its highest version). Pooling and
    maximum length are those the model was exported with; `normalize` scales each embedding to
    unit L2 norm (a model exported with --normalize already serves unit vectors).
    """

    def __init__(self, path: str, normalize: bool = False):
        self.path = layout.saved_model_dir(path)
        self.normalize = normalize
        self._model = tf.saved_model.load(self.path)
        signature = self._model.signatures.get(layout.SIGNATURE_KEY)
        inputs = signature.structured_input_signature[1] if signature is not None else {}
        outputs = signature.structured_outputs if signature is not None else {}
        if set(inputs) != {INPUT_NAME} or OUTPUT_NAME not in outputs:
            raise ValueError(
                f"{self.path}: not a sentence-embedding SavedModel (its {layout.SIGNATURE_KEY} takes "
                f"{sorted(inputs)} and returns {sorted(outputs)}); export one with --kind=sentence")
        self._signature = signature
        self.hidden_size = int(outputs[OUTPUT_NAME].shape[-1])
        self.policy = exported_policy(signature)
        """The precision policy the exported graph computes in."""

    def embed_batch(self, texts: tf.Tensor) -> tf.Tensor:
        embeddings = self._signature(**{INPUT_NAME: texts})[OUTPUT_NAME]
        return l2_normalized(embeddings) if self.normalize else embeddings

    def embed(self, texts: Sequence[str], batch_size: int = 64,
              on_batch: Optional[Callable[[int], None]] = None) -> np.ndarray:
        """Embeddings [len(texts), hidden] float32, as `SentenceEmbedder.embed`."""
        return embed_by_length(texts, self.embed_batch, self.hidden_size, batch_size, on_batch)
