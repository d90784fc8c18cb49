"""Sentence embeddings for lists of strings: tokenizer and encoder in one traced graph."""
import os
from typing import Callable, Optional, Sequence, Union

import numpy as np
import tensorflow as tf

from tfdialemb.encoders.checkpoint import Pretrained
from tfdialemb.encoders.encoder import Encoder
from tfdialemb.encoders.config import usable_max_length
from tfdialemb.inference.kinds import register_runtime
from tfdialemb.inference.sentence_transformers_calls import batch_output, progress_callback
from tfdialemb.inference.trace_policy import TraceWhenWorthIt, batch_count
from tfdialemb.model_dir import inference_parts
from tfdialemb.core.similarity import l2_normalized
from tfdialemb.text.tokenizer import BertTokenizer


@register_runtime("sentence", "curved")
class SentenceEmbedder(tf.Module):
    """Strings in, pooled last-layer embeddings out.

    Inputs are sorted by length and batched so that each batch pads only to its own longest
    sentence; the output keeps the input order. A few batches run eagerly and a longer run traces
    (`TraceWhenWorthIt`); one trace serves every batch shape, and it is traced without autograph:
    the graph has no data-dependent Python control flow, and autograph's conversion of Keras and
    tensorflow-text source was most of the first call's time (the same holds for the other
    inference and serving functions). With `normalize`, every embedding is scaled to unit L2 norm
    (sentence-transformers' Normalize), so dot products are cosines.
    """

    def __init__(self, encoder: Encoder, tokenizer: BertTokenizer, pooling: str = "mean",
                 max_length: int = 128, normalize: bool = False):
        super().__init__()
        max_length = usable_max_length(encoder.encoder_config, max_length)
        self.encoder = encoder
        self.tokenizer = tokenizer
        self.pooling = pooling
        self.max_length = max_length
        self.normalize = normalize
        self._batch_function = TraceWhenWorthIt(self.embed_batch)

    @classmethod
    def load(cls, path: Union[str, os.PathLike], pooling: Optional[str] = None, max_length: Optional[int] = None,
             normalize: bool = False) -> "SentenceEmbedder":
        """From a directory: a trained model (`python -m tfdialemb.train`; its recorded pooling and
        max length are the defaults, as for `encode --model_dir`) or any checkpoint
        `load_pretrained` reads (mean pooling, 128 tokens by default)."""
        return cls.from_pretrained(path, pooling=pooling, max_length=max_length, normalize=normalize)

    @classmethod
    def from_pretrained(cls, pretrained: Union[Pretrained, str, os.PathLike], pooling: Optional[str] = None,
                        max_length: Optional[int] = None, normalize: bool = False) -> "SentenceEmbedder":
        """From a directory (as `load`) or a loaded `Pretrained` (mean pooling, 128 tokens by
        default), with the same arguments."""
        encoder, tokenizer, settings = inference_parts(pretrained, "sentence",
                                                       {"pooling": pooling, "max_length": max_length})
        return cls.from_settings(encoder, tokenizer, settings, normalize)

    @classmethod
    def from_settings(cls, encoder: Encoder, tokenizer: BertTokenizer, settings,
                      normalize: bool = False) -> "SentenceEmbedder":
        """From the `sentence` (or `curved`) settings of `tfdialemb.kind_registry`."""
        return cls(encoder, tokenizer, pooling=settings["pooling"], max_length=settings["max_length"],
                   normalize=normalize)

    @tf.function(autograph=False, input_signature=[tf.TensorSpec([None], tf.string)], reduce_retracing=True)
    def embed_batch(self, texts):
        inputs = self.tokenizer(texts, max_length=self.max_length)
        embeddings = self.encoder.embed(inputs, pooling=self.pooling, training=False)
        return l2_normalized(embeddings) if self.normalize else embeddings

    def embed(self, texts: Sequence[str], batch_size: int = 64,
              on_batch: Optional[Callable[[int], None]] = None) -> np.ndarray:
        """Embeddings [len(texts), hidden] float32; `on_batch(n)` is told after each batch of n."""
        embed_batch = self._batch_function.for_batches(len(texts), batch_size)
        return embed_by_length(texts, embed_batch, self.encoder.encoder_config.hidden_size, batch_size, on_batch)

    def encode(self, sentences: Union[str, Sequence[str]], batch_size: int = 32, normalize_embeddings: bool = False,
               show_progress_bar: Optional[bool] = None, convert_to_numpy: bool = True,
               convert_to_tensor: bool = False):
        """`embed` called as sentence-transformers' `SentenceTransformer.encode`: a string gives
        one embedding [hidden], a list [len, hidden] float32 (numpy; a tf.Tensor with
        `convert_to_numpy=False` or `convert_to_tensor=True`). `normalize_embeddings` scales each
        to unit length; `show_progress_bar` draws a bar on stderr (None: when tfdialemb's logger
        passes INFO)."""
        single = isinstance(sentences, str)
        texts = [sentences] if single else list(sentences)
        for position, text in enumerate(texts):
            if not isinstance(text, str):
                raise ValueError(f"sentence {position}: expected a string, got {type(text).__name__}")
        rows = self.embed(texts, batch_size, progress_callback(len(texts), "sentences", show_progress_bar))
        return batch_output(rows, single, convert_to_numpy, convert_to_tensor, normalize=normalize_embeddings)


def embed_by_length(texts: Sequence[str], embed_batch: Callable[[tf.Tensor], tf.Tensor], hidden_size: int,
                    batch_size: int, on_batch: Optional[Callable[[int], None]] = None) -> np.ndarray:
    """`embed_batch` over `texts` in batches of similar length, each padded only to its own
    longest text; rows of the result [len(texts), hidden_size] keep the input order."""
    batch_count(len(texts), batch_size)
    order = np.argsort([len(t) for t in texts], kind="stable")
    output = np.zeros([len(texts), hidden_size], np.float32)
    for start in range(0, len(texts), batch_size):
        index = order[start:start + batch_size]
        output[index] = embed_batch(tf.constant([texts[i] for i in index])).numpy()
        if on_batch is not None:
            on_batch(len(index))
    return output
