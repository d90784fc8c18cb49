"""dial2vec's PLM baselines RoBERTa and T5 (paper Sec. 4.3, Table 2): "the average of the output
embeddings from the top layer" over the whole dialogue read as one token sequence.

How a dialogue becomes tokens is the switch `--dial2vec_plm_input`:
- paper (Sec. 3.2.1: "concatenate all the utterances and then tokenize them"): the turns joined by
  spaces and encoded as one text, as the model's tokenizer encodes a text (RoBERTa `<s> … </s>`,
  T5 `… </s>`), with the model's own positions; a plain mean over the tokens.
- released (AlibabaResearch/DAMO-ConvAI dial2vec/data/data_provider.py:
  `__convert_examples_worker_for_bert`, as scripts/inference/run_roberta.sh and run_t5.sh run it,
  with --use_sep_token False; network.py:`Dial2vec.encoder`, `BertAVG`): each turn is tokenized
  alone and the pieces are concatenated, so RoBERTa puts no space before a turn's first word.
  RoBERTa gets `<s>` first and no `</s>`, T5 gets `</s>` last. RoBERTa is given position ids
  0..n−1, where its own positions start at 2. The mean divides by the token count + 1e-6.
Both keep the first `max_length` tokens (the released code: 512 for both models).
"""
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Sequence

import numpy as np

from tfdialemb.dialogue import Dialogue
from tfdialemb.core.options import PAPER, Switch

if TYPE_CHECKING:  # the loader pulls in the encoders package, slow to import; flags need only PLM_INPUT
    from tfdialemb.baselines.transformers_encoder import TransformersEncoder

PLM_INPUT = Switch(
    "dial2vec_plm_input", PAPER, "How --embedding=plm_mean turns a dialogue into RoBERTa / T5 tokens.",
    paper="Sec. 3.2.1: the turns concatenated and tokenized as one text, with the model's own special "
          "tokens and positions",
    released="AlibabaResearch/DAMO-ConvAI dial2vec/data/data_provider.py:__convert_examples_worker_for_bert "
             "(--use_sep_token False) and network.py:Dial2vec.encoder: turns tokenized one by one and "
             "concatenated, RoBERTa <s> without </s> and position ids from 0, T5 </s> last, mean over "
             "count + 1e-6")
RELEASED_MEAN_EPSILON = 1e-6
"""network.py: `BertAVG(eps=1e-6)`, added to the token count."""


class PlmMeanDialogueEmbedder:
    """Mean of a RoBERTa / T5 encoder's last hidden states over a dialogue's tokens."""

    view = "mean"

    def __init__(self, encoder: "TransformersEncoder", input_layout: str = PAPER, max_length: int = 512):
        if input_layout not in PLM_INPUT.choices:
            raise ValueError(f"input_layout must be one of {PLM_INPUT.choices}, got {input_layout!r}")
        config = encoder.model.config
        # RoBERTa's positions run from padding_idx + 1; the released code keeps max_position - 2 tokens.
        limit = config.max_position_embeddings - 2 if encoder.model_type == "roberta" else None
        if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 2 or (
                limit is not None and max_length > limit):
            raise ValueError(f"max_length must be an int from 2 to {limit or 'any'} for "
                             f"{encoder.directory}, got {max_length!r}")
        self.encoder, self.input_layout, self.max_length = encoder, input_layout, max_length

    def token_ids(self, dialogue: Dialogue) -> List[int]:
        """The dialogue's input ids under the input layout, at most `max_length`."""
        tokenizer = self.encoder.tokenizer
        texts = [turn.text for turn in dialogue.turns]
        if self.input_layout == PAPER:
            return tokenizer(" ".join(texts), truncation=True, max_length=self.max_length)["input_ids"]
        pieces = [piece for text in texts for piece in tokenizer.tokenize(text)]
        if self.encoder.model_type == "roberta":
            pieces = [tokenizer.cls_token] + pieces
        else:
            pieces = pieces + [tokenizer.eos_token]
        return tokenizer.convert_tokens_to_ids(pieces[:self.max_length])

    def _mean_of_batch(self, batch: List[List[int]]) -> np.ndarray:
        import tensorflow as tf  # pylint: disable=import-outside-toplevel

        width = max(map(len, batch))
        pad = self.encoder.tokenizer.pad_token_id
        ids = np.array([row + [pad] * (width - len(row)) for row in batch], np.int32)
        mask = np.array([[1] * len(row) + [0] * (width - len(row)) for row in batch], np.int32)
        inputs = {"input_ids": tf.constant(ids), "attention_mask": tf.constant(mask)}
        if self.input_layout != PAPER and self.encoder.model_type == "roberta":
            inputs["position_ids"] = tf.constant(np.arange(width, dtype=np.int32)[None] * mask)
        hidden = self.encoder.model(**inputs, training=False).last_hidden_state.numpy()
        weights = mask[..., None].astype(np.float64)
        count = weights.sum(axis=1) + (0.0 if self.input_layout == PAPER else RELEASED_MEAN_EPSILON)
        return ((hidden * weights).sum(axis=1) / count).astype(np.float32)

    def embed(self, dialogues: Sequence[Dialogue], batch_size: int = 8,
              on_batch: Optional[Callable[[int], None]] = None) -> np.ndarray:
        """[N, H] float32, one row per dialogue, in input order; batched by length, so each batch
        pads only to its own longest dialogue."""
        if not dialogues:
            raise ValueError("no dialogues to embed")
        ids = [self.token_ids(dialogue) for dialogue in dialogues]
        order = np.argsort([len(row) for row in ids], kind="stable")
        output = None
        for start in range(0, len(ids), batch_size):
            index = order[start:start + batch_size]
            means = self._mean_of_batch([ids[i] for i in index])
            if output is None:
                output = np.zeros([len(ids), means.shape[1]], np.float32)
            output[index] = means
            if on_batch:
                on_batch(len(index))
        return output

    def embed_views(self, dialogues: Sequence[Dialogue], **kwargs) -> Dict[str, np.ndarray]:
        return {self.view: self.embed(dialogues, **kwargs)}
