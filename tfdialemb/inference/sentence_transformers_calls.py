"""The calling conventions of sentence-transformers' `encode` and `CrossEncoder.predict` that the
runtimes share (https://sbert.net/docs/package_reference/sentence_transformer/SentenceTransformer.html,
https://sbert.net/docs/cross_encoder/usage/usage.html): one input gives one result, a list a
batch of them; `show_progress_bar` draws a bar; numpy unless a tensor is asked for."""
import logging
from typing import Callable, Optional

import numpy as np
import tensorflow as tf

from tfdialemb.core.progress import Progress
from tfdialemb.core.similarity import l2_normalized


def progress_callback(total: int, unit: str, show_progress_bar: Optional[bool]) -> Optional[Callable[[int], None]]:
    """An `on_batch` that advances a progress bar on stderr over `total` `unit`, or None for no bar.
    `show_progress_bar=None` shows one when tfdialemb's logger passes INFO, as sentence-transformers
    decides by its own logger's level."""
    if show_progress_bar is None:
        show_progress_bar = logging.getLogger("tfdialemb").getEffectiveLevel() <= logging.INFO
    return Progress(total, unit).advance if show_progress_bar else None


def batch_output(rows: np.ndarray, single: bool, convert_to_numpy: bool = True, convert_to_tensor: bool = False,
                 normalize: bool = False):
    """`rows` [n, ...] as the caller asked: the first row alone for a `single` input, each row
    scaled to unit L2 norm with `normalize`, a numpy array, or a tf.Tensor when
    `convert_to_tensor` or not `convert_to_numpy` (sentence-transformers gives a list of torch
    tensors for the latter; one tensor is what TensorFlow code consumes)."""
    values = l2_normalized(rows) if normalize else tf.constant(rows)
    if single:
        values = values[0]
    return values if convert_to_tensor or not convert_to_numpy else values.numpy()
