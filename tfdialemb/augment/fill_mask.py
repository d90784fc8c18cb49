"""The fill-mask model of token insertion and replacement (thesis Sec. 4.1; the released code runs
transformers' fill-mask pipeline, mylib/augmentations/insert.py `_to_mlm`).

Any checkpoint with a masked-LM head that `load_pretrained` reads will do: a Hugging Face
BertForMaskedLM / BertForPreTraining directory, a Google TF1 BERT from run_pretraining.py, or a
model directory written by `python -m tfdialemb.pretrain --objective=mlm`. One call predicts for
many sequences (utterance windows of many dialogues): they are sorted by length and cut into
batches of at most `batch_size` rows, each padded only to its own longest sequence; the head and
the softmax over the vocabulary run on the masked positions alone (none padded: a batch's rows
hold from one to dozens of masks), and a sequence without masks is not encoded. The graph is
traced once with unknown sizes, so no batch shape retraces it.
"""
import os
from typing import List, Sequence, Tuple, Union

import numpy as np
import tensorflow as tf

from tfdialemb.encoders.checkpoint import load_pretrained
from tfdialemb.encoders.encoder import Encoder
from tfdialemb.layers.masked_lm_head import load_masked_lm_head, masked_lm_head
from tfdialemb.text.tokenizer import BertTokenizer

class FillMaskModel:
    """An encoder with BERT's masked-LM head: the k most probable tokens, and their softmax
    probabilities over the vocabulary, at the masked positions of many sequences at once."""

    def __init__(self, encoder: Encoder, tokenizer: BertTokenizer, head=None):
        self.encoder = encoder
        self.tokenizer = tokenizer
        self.head = masked_lm_head(encoder) if head is None else head
        self.max_length = encoder.encoder_config.max_position_embeddings
        # One trace with unknown sizes serves every batch shape and every k.
        matrix = tf.TensorSpec([None, None], tf.int32)
        self._top_k = tf.function(self._predict, input_signature=[matrix, matrix, matrix, tf.TensorSpec([], tf.int32)],
                                  autograph=False)

    @classmethod
    def load(cls, directory: Union[str, os.PathLike]) -> "FillMaskModel":
        """The encoder, tokenizer and masked-LM head of a checkpoint directory; a CheckpointError
        names the directory and what to give when it has no masked-LM head."""
        directory = os.fspath(directory)
        pretrained = load_pretrained(directory)
        model = cls(pretrained.encoder, pretrained.tokenizer)
        load_masked_lm_head(model.head, directory, required=True)
        return model

    def _predict(self, word_ids, input_mask, positions, k):
        """Top-k [1, P, k] at `positions` [1, P], indices into the batch's flattened tokens."""
        sequence = self.encoder({"input_word_ids": word_ids, "input_mask": input_mask},
                                training=False)["sequence_output"]
        tokens = tf.reshape(sequence, [1, -1, tf.shape(sequence)[-1]])
        logits = self.head(tokens, masked_positions=positions)
        return tf.math.top_k(tf.nn.softmax(tf.cast(logits, tf.float32)), k=k)

    def top_k(self, sequences: Sequence[Sequence[int]], positions: Sequence[Sequence[int]], k: int,
              batch_size: int) -> List[Tuple[np.ndarray, np.ndarray]]:
        """Per sequence (token ids, [CLS] and [SEP] included, at most `max_length`) and its masked
        `positions`: the top-`k` token ids [P, k] and their probabilities [P, k], best first."""
        if len(sequences) != len(positions):
            raise ValueError(f"{len(sequences)} sequences but {len(positions)} position lists")
        if batch_size < 1 or k < 1:
            raise ValueError(f"batch_size and k must be positive, got {batch_size} and {k}")
        too_long = [i for i, ids in enumerate(sequences) if len(ids) > self.max_length]
        if too_long:
            raise ValueError(f"sequence {too_long[0]} has {len(sequences[too_long[0]])} tokens; the model "
                             f"takes at most {self.max_length}")
        results: List[Tuple[np.ndarray, np.ndarray]] = [(np.zeros([0, k], np.int32), np.zeros([0, k], np.float32))
                                                        for _ in sequences]
        masked = [i for i in range(len(sequences)) if len(positions[i])]
        order = sorted(masked, key=lambda i: len(sequences[i]))
        for start in range(0, len(order), batch_size):
            rows = order[start:start + batch_size]
            length = max(len(sequences[i]) for i in rows)
            word_ids = np.full([len(rows), length], self.tokenizer.pad_id, np.int32)
            input_mask = np.zeros([len(rows), length], np.int32)
            for row, i in enumerate(rows):
                word_ids[row, :len(sequences[i])] = sequences[i]
                input_mask[row, :len(sequences[i])] = 1
            flat = np.concatenate([row * length + np.asarray(positions[i], np.int32) for row, i in enumerate(rows)])
            probs, ids = self._top_k(tf.constant(word_ids), tf.constant(input_mask), tf.constant(flat[np.newaxis]),
                                     tf.constant(k, tf.int32))
            probs, ids = probs.numpy()[0], ids.numpy()[0]
            offset = 0
            for i in rows:
                results[i] = ids[offset:offset + len(positions[i])], probs[offset:offset + len(positions[i])]
                offset += len(positions[i])
        return results
