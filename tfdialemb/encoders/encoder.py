"""The project's text encoder: Model Garden's BertEncoderV2 plus optional role/turn embeddings."""
from typing import Dict, List

import tensorflow as tf
import tf_keras
from official.modeling import activations
from official.nlp.modeling import layers as nlp_layers
from official.nlp.modeling.networks import BertEncoderV2

from tfdialemb.encoders.attention import adopt_head_major_attention
from tfdialemb.encoders.config import EncoderConfig
from tfdialemb.encoders.gelu import gelu
from tfdialemb.encoders.mask_dropout import adopt_mask_dropout
from tfdialemb.encoders.pooling import pool
from tfdialemb.core.precision import jit_compiled_encoders

ROW_GROUPS = 4
"""Encoder calls `Encoder.encode_by_length` splits its rows into by length (the default of
`Encoder.row_groups`; read when a step is traced)."""

COMPILED_WIDTH_STEP = 32
"""The widths an XLA-compiled inference forward pass sees: multiples of this many tokens (or the
encoder's position count, where that is smaller)."""

ACTIVATIONS = {
    "gelu": gelu,  # the exact (erf) form
    "gelu_approximate": activations.gelu,  # Model Garden's registered tanh approximation.
    "relu": "relu",
}


def compiled_width(width: tf.Tensor, positions: int) -> tf.Tensor:
    """`width` rounded up to a multiple of COMPILED_WIDTH_STEP (at least one step), but never past
    the encoder's `positions` when `width` fits in them. The padding is masked, so the states of
    the real positions are those of the unpadded batch up to rounding (a row with no real token
    at all attends over its padding either way, to more of it here)."""
    rounded = tf.maximum((width + COMPILED_WIDTH_STEP - 1) // COMPILED_WIDTH_STEP, 1) * COMPILED_WIDTH_STEP
    return tf.minimum(rounded, tf.maximum(width, positions))


def random_initializer(config: EncoderConfig) -> tf_keras.initializers.Initializer:
    """BERT's initialisation of new weights: truncated normal with the config's range."""
    return tf_keras.initializers.TruncatedNormal(stddev=config.initializer_range)


class Encoder(tf_keras.Model):
    """BERT encoder over `input_word_ids`, `input_mask` and optional `input_type_ids`.

    With `role_vocab_size` or `turn_vocab_size` set in the config, `role_ids` / `turn_ids` inputs
    add learned embeddings to the word embeddings, as PLATO adds role and turn embeddings to token,
    position and segment embeddings (dial2vec, Sec. 3.1). The sum then passes through BERT's
    embedding layer norm unchanged.

    `random_init=False` creates BERT's variables as zeros, for an encoder whose weights are read
    from a checkpoint next: drawing tens of millions of truncated-normal values first was half
    the load time.

    BERT's dropout layers become `MaskDropout` once built, at BERT's rates (`_use_bert_dropout`), and
    its attention layers `HeadMajorAttention` (the same products, without transposing the scores).
    """

    def __init__(self, config: EncoderConfig, random_init: bool = True, **kwargs):
        super().__init__(**kwargs)
        self.encoder_config = config
        initializer = random_initializer(config) if random_init else tf_keras.initializers.Zeros()
        self.bert = BertEncoderV2(
            vocab_size=config.vocab_size,
            hidden_size=config.hidden_size,
            num_layers=config.num_layers,
            num_attention_heads=config.num_attention_heads,
            max_sequence_length=config.max_position_embeddings,
            type_vocab_size=config.type_vocab_size,
            inner_dim=config.intermediate_size,
            inner_activation=ACTIVATIONS[config.hidden_act],
            embedding_width=config.embedding_size or None,
            output_dropout=config.hidden_dropout,
            attention_dropout=config.attention_dropout,
            initializer=initializer,
            name="bert_encoder_v2",
        )
        self.extra_embeddings = {}
        for key, size in (("role_ids", config.role_vocab_size), ("turn_ids", config.turn_vocab_size)):
            if size:
                self.extra_embeddings[key] = nlp_layers.OnDeviceEmbedding(
                    vocab_size=size,
                    embedding_width=config.hidden_size,
                    initializer=random_initializer(config),
                    name=key.replace("_ids", "_embeddings"),
                )
        self._bert_ready = False
        self.row_groups = ROW_GROUPS
        self.fixed_shapes = False  # see `use_fixed_shapes`

    def use_fixed_shapes(self) -> None:
        """Makes every shape in a traced step follow from the batch's shape alone, as XLA needs
        (read when a step is traced): one row group, whose width is the batch's, and
        `encode_rows` encoding the empty rows too, whose count only the data decides."""
        self.row_groups = 1
        self.fixed_shapes = True

    def call(self, inputs, training=None):
        return self._run(inputs, training, all_layers=False)

    def all_layer_states(self, inputs, training=None) -> List[tf.Tensor]:
        """Every transformer layer's output states [B, T, H], bottom to top; the last is
        `sequence_output`. Hugging Face's `hidden_states[-k]` is element -k for k up to the
        number of layers (its element 0, the embedding output, is not among them)."""
        return self._run(inputs, training, all_layers=True)["encoder_outputs"]

    def _run(self, inputs, training, all_layers: bool):
        if training:
            return self._forward_maybe_compiled(inputs, training, all_layers)
        # An empty inference batch has width 0, and BERT's pooler reads position 0: one
        # position is added, and taken off the states again. Compiled, the width is padded to a
        # multiple of COMPILED_WIDTH_STEP, so that XLA compiles a few shapes, not one per batch.
        width = tf.shape(inputs["input_word_ids"])[1]
        padded = (compiled_width(width, self.encoder_config.max_position_embeddings) if jit_compiled_encoders()
                  else tf.maximum(width, 1))
        padding = [[0, 0], [0, padded - width]]
        outputs = self._forward_maybe_compiled({key: tf.pad(value, padding) for key, value in inputs.items()},
                                               training, all_layers)
        outputs["sequence_output"] = outputs["sequence_output"][:, :width]
        if all_layers:
            outputs["encoder_outputs"] = [states[:, :width] for states in outputs["encoder_outputs"]]
        return outputs

    def _forward_maybe_compiled(self, inputs, training, all_layers: bool):
        if jit_compiled_encoders():
            return self._compiled_forward(inputs, training, all_layers)
        return self._forward(inputs, training, all_layers)

    @tf.function(jit_compile=True, reduce_retracing=True, autograph=False)
    def _compiled_forward(self, inputs, training, all_layers):
        """`_forward` compiled with XLA, asked for by `tfdialemb.core.precision.apply`: only this part of
        an embedding graph, whose tokenizer's string ops XLA cannot compile."""
        return self._forward(inputs, training, all_layers)

    def _forward(self, inputs, training, all_layers=False):
        word_ids = inputs["input_word_ids"]
        bert_inputs = {
            "input_word_ids": word_ids,
            "input_mask": inputs["input_mask"],
            "input_type_ids": inputs.get("input_type_ids", tf.zeros_like(word_ids)),
        }
        extra = [key for key in ("role_ids", "turn_ids") if key in inputs]
        for key in extra:
            if key not in self.extra_embeddings:
                raise ValueError(
                    f"input {key!r} given but the encoder has no {key} embeddings; set "
                    f"{key.replace('_ids', '_vocab_size')} in its config"
                )
        if extra:
            embeddings = self.bert.get_embedding_layer()(word_ids)
            for key in extra:
                embeddings += self.extra_embeddings[key](inputs[key])
            bert_inputs["input_word_embeddings"] = embeddings
        self._build_bert()
        outputs = self.bert(bert_inputs, training=training)
        result = {
            "sequence_output": outputs["sequence_output"],
            "pooled_output": outputs["pooled_output"],
        }
        if all_layers:
            result["encoder_outputs"] = list(outputs["encoder_outputs"])
        return result

    def embed(self, inputs, pooling: str = "mean", training=None) -> tf.Tensor:
        """Sentence embeddings [B, H] float32: `pooling` over the last layer's valid tokens,
        pooled in float32 whatever the compute dtype."""
        sequence = self(inputs, training=training)["sequence_output"]
        return pool(tf.cast(sequence, tf.float32), inputs["input_mask"], pooling)

    def encode_by_length(self, inputs: Dict[str, tf.Tensor], training=None) -> tf.Tensor:
        """Last-layer states [N, T, H] of sequences [N, T] (`call`'s inputs), zero at padded
        positions, from `row_groups` encoder calls over the rows sorted by length, each cut to
        its own longest row.

        A batch drawn uniformly from the corpus then pads about as little as one grouped by
        length, while its examples, and so the in-batch negatives, stay those drawn. Padding is
        masked out of attention, so each row's states are those of encoding it alone. One group
        is one call on the rows as given (what XLA, which compiles fixed shapes, needs).
        """
        mask = inputs["input_mask"]
        if self.row_groups == 1:
            return _zero_padding(self(inputs, training=training)["sequence_output"], mask)
        width = tf.shape(mask)[1]
        # A row's length is one past its last valid position, whatever lies before it.
        positions = tf.range(1, width + 1)[tf.newaxis]
        lengths = tf.reduce_max(tf.where(mask > 0, positions, tf.zeros_like(positions)), axis=1)
        order = tf.argsort(lengths, stable=True)
        count, groups = tf.size(order), self.row_groups
        parts = []
        for group in range(groups):
            rows = order[count * group // groups:count * (group + 1) // groups]
            # At least one position (an empty group still makes a call), at most the batch's.
            cut = tf.minimum(tf.reduce_max(tf.concat([[1], tf.gather(lengths, rows)], axis=0)), width)
            states = self({name: tf.gather(value, rows)[:, :cut] for name, value in inputs.items()},
                          training=training)["sequence_output"]
            parts.append(tf.pad(states, [[0, 0], [0, width - cut], [0, 0]]))
        return _zero_padding(tf.gather(tf.concat(parts, axis=0), tf.argsort(order)), mask)

    def encode_rows(self, ids: tf.Tensor, mask: tf.Tensor, training=None) -> tf.Tensor:
        """Token states [B, R, T, H] of a stack of sequences [B, R, T] (context turns,
        candidates), zero at padded positions, by `encode_by_length`; only the non-empty rows
        are encoded, so padded turns stay all-zero and cost nothing. With `fixed_shapes` (XLA)
        every row is encoded and the empty ones zeroed, since how many rows are empty is known
        only from the data."""
        shape = tf.shape(ids)
        hidden = self.encoder_config.hidden_size
        flat_ids = tf.reshape(ids, [-1, shape[2]])
        flat_mask = tf.reshape(mask, [-1, shape[2]])
        if self.fixed_shapes:
            states = self.encode_by_length({"input_word_ids": flat_ids, "input_mask": flat_mask}, training=training)
            return tf.reshape(states, [shape[0], shape[1], shape[2], hidden])
        present = tf.where(tf.reduce_any(flat_mask > 0, axis=-1))[:, 0]
        states = self.encode_by_length({"input_word_ids": tf.gather(flat_ids, present),
                                        "input_mask": tf.gather(flat_mask, present)}, training=training)
        rows = tf.cast(shape[0] * shape[1], tf.int64)
        full = tf.scatter_nd(present[:, tf.newaxis], states,
                             tf.stack([rows, tf.cast(shape[2], tf.int64), hidden]))
        return tf.reshape(full, [shape[0], shape[1], shape[2], hidden])

    def build_variables(self) -> "Encoder":
        """Creates every variable with a dummy call, so that weights can be assigned or restored."""
        # BERT first, so its variables are named inside it whatever extra inputs follow.
        self._build_bert()
        if not self.extra_embeddings:
            # Nothing else to create: a second dummy pass through BERT was a fifth of every load.
            self.built = True
            return self
        ids = tf.zeros([1, 2], tf.int32)
        inputs = {"input_word_ids": ids, "input_mask": tf.ones_like(ids)}
        for key in self.extra_embeddings:
            inputs[key] = ids
        self(inputs, training=False)
        return self

    def _build_bert(self) -> None:
        """Once: builds BERT with a dummy pass if its first real call is still to come, then gives
        it BERT's dropout and the head-major attention, so that no traced step ever holds Model
        Garden's."""
        if self._bert_ready:
            return
        if not self.bert.built:
            ids = tf.zeros([1, 2], tf.int32)
            self.bert({"input_word_ids": ids, "input_mask": tf.ones_like(ids), "input_type_ids": ids},
                      training=False)
        self._use_bert_dropout()
        adopt_head_major_attention(self.bert)
        self._bert_ready = True

    def _use_bert_dropout(self) -> None:
        """BERT's dropout rates as `MaskDropout` layers (half the cost on CPU).

        Model Garden's block drops the attention output at the attention-probability rate; BERT
        (Google's `modeling.py`, Hugging Face's `BertSelfOutput`) drops it at the hidden rate, so
        that layer takes `hidden_dropout` here.
        """
        for block in self.bert.transformer_layers:
            block._attention_dropout.rate = self.encoder_config.hidden_dropout  # pylint: disable=protected-access
        adopt_mask_dropout(self.bert)

    def freeze_bottom(self, num_layers: int) -> None:
        """Freezes the embeddings (with ELECTRA's projection) and the bottom `num_layers` layers.

        `num_layers=0` freezes nothing. DialogueCSE and dial2vec freeze the embeddings and the
        bottom 6 layers. A negative `num_layers` counts from the top as a slice does: -3 freezes
        the embeddings and every layer but the top 3, the augmentation thesis' "only the last 3
        layers train" at any depth (released mylib/utils/training/generic.py `freeze_hf_model`).
        Extra role/turn embeddings are new parameters and stay trainable.
        """
        layers = self.bert.transformer_layers
        if not -len(layers) <= num_layers <= len(layers):
            raise ValueError(
                f"cannot freeze {num_layers} layers of a {len(layers)}-layer encoder"
            )
        if num_layers == 0:
            return
        bert = self.bert
        embedding_layers = [
            bert.get_embedding_layer(),
            bert._position_embedding_layer,  # pylint: disable=protected-access
            bert._type_embedding_layer,  # pylint: disable=protected-access
            bert._embedding_norm_layer,  # pylint: disable=protected-access
        ]
        if bert._embedding_projection is not None:  # pylint: disable=protected-access
            embedding_layers.append(bert._embedding_projection)  # pylint: disable=protected-access
        for layer in embedding_layers:
            layer.trainable = False
        for layer in layers[:num_layers]:
            layer.trainable = False

    def get_config(self):
        return {"config": self.encoder_config.to_dict(), "name": self.name}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return cls(EncoderConfig.from_dict(config["config"]), name=config.get("name"))


def _zero_padding(states: tf.Tensor, mask: tf.Tensor) -> tf.Tensor:
    """`states` [N, T, H] with zeros where `mask` [N, T] is 0."""
    return states * tf.cast(mask > 0, states.dtype)[..., tf.newaxis]
