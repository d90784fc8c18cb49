"""Dialogue embeddings for lists of dialogues: tokenizer, packing and encoder in one traced graph.

The dialogue is pre-processed and packed exactly as the dial2vec build does it (consecutive turns
of one speaker merged when the model was trained so, `pack_dialogues`), so a model trained on a
build embeds the same sequences; the outputs are `tfdialemb.layers.dialogue_views`: "interlocutor"
(Eq. 4), "mean", "cls" (the last-layer [CLS] state, the CLS-pooling baseline for any encoder) and
"p1", "p2", ... (one interlocutor's mean, dial2vec Table 4). `pooling` names the one the model
serves (the export's `embeddings`, validation); the augmentation thesis' input layout
(`speaker_prefix`, `final_separator`) is a packing setting like the separator. With `hidden_layers`, the same
pass also pools lower layers' states ("cls[-2]", "mean[-2]", ...: the thesis' hidden-state
probe, Sec. 5.5, Table 5).
"""
import os
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import tensorflow as tf

from tfdialemb.dialogue import Dialogue, as_dialogue, role_ids
from tfdialemb.encoders.checkpoint import Pretrained
from tfdialemb.encoders.encoder import Encoder
from tfdialemb.encoders.config import usable_max_length
from tfdialemb.inference.kinds import register_runtime
from tfdialemb.inference.sentence_transformers_calls import batch_output, progress_callback
from tfdialemb.inference.trace_policy import TraceWhenWorthIt
from tfdialemb.layers.dialogue_views import (
    HIDDEN_STATE_POOLINGS,
    POOLINGS,
    check_role_turn_tables,
    dialogue_embeddings,
    embedding_names,
    encode_dialogue_layers,
    encode_dialogues,
    has_role_turn_tables,
    hidden_state_embeddings,
    hidden_state_name,
)
from tfdialemb.model_dir import inference_parts
from tfdialemb.core.similarity import l2_normalized
from tfdialemb.text.tokenizer import BertTokenizer
from tfdialemb.text.dialogue_packing import (
    DialogueInputs,
    dense_dialogues,
    merge_consecutive_turns,
    pack_dialogues,
    roles_in_order_of_appearance,
    separator_id,
    speaker_prefixed,
    speaker_prefixes,
)
from tfdialemb.text.tokenizer import require_tokens


DialogueLike = Union[Dialogue, Mapping[str, Any], Sequence[str]]
"""A dialogue as the embedder takes it: a `Dialogue`, a canonical JSON object, or its turn texts
with speakers alternating."""


@register_runtime("dialogue")
class DialogueEmbedder(tf.Module):
    """Turns and speakers in, dialogue embeddings out.

    Speakers: each turn's speaker is any non-negative integer id; within a dialogue the ids are
    renumbered 0, 1, ... in order of first appearance, as training numbers a dialogue's speakers
    (`dialogue.role_ids`), so [5, 7] embeds as [0, 1] and [1, 1] as [0, 0]; a negative id is
    refused. Every turn needs a token (`require_tokens`); an empty batch gives empty outputs.

    `separator` ([SEP] or [EOU]), `speaker_prefix`, `final_separator`, `role_turn_embeddings`
    and `merge_consecutive_turns` must match the build and the model that trained the encoder
    (`from_settings` takes them from a model directory's record). Speakers past `num_roles` fold
    into the last role, as the dial2vec and augcl builders fold speakers past max_roles. `hidden_layers` (negative, -k = the
    k-th layer from the top) adds those layers' [CLS] and mean views. With `normalize`, every view is
    scaled to unit L2 norm.
    """

    def __init__(self, encoder: Encoder, tokenizer: BertTokenizer, max_length: int = 512,
                 separator: str = "[SEP]", role_turn_embeddings: bool = False, num_roles: int = 2,
                 merge_consecutive_turns: bool = False, speaker_prefix: bool = False,
                 final_separator: bool = False, pooling: str = "interlocutor",
                 hidden_layers: Sequence[int] = (), normalize: bool = False):
        super().__init__()
        max_length = usable_max_length(encoder.encoder_config, max_length)
        if num_roles < 2:
            raise ValueError(f"num_roles must be at least 2, got {num_roles}")
        self.hidden_layers = checked_hidden_layers(hidden_layers, encoder.encoder_config.num_layers)
        if pooling not in POOLINGS:
            raise ValueError(f"dialogue pooling must be one of {POOLINGS}, got {pooling!r}")
        if role_turn_embeddings:
            check_role_turn_tables(encoder)
        self.encoder = encoder
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.separator = separator_id(tokenizer, separator)
        self.role_turn_embeddings = role_turn_embeddings
        self.num_roles = num_roles
        self.merge_consecutive_turns = merge_consecutive_turns
        self.speaker_prefix = speaker_prefix
        self.prefixes = speaker_prefixes(tokenizer, num_roles) if speaker_prefix else None
        self.final_separator = final_separator
        self.pooling = pooling
        self.normalize = normalize
        self._batch_function = TraceWhenWorthIt(self.embed_batch)

    @classmethod
    def load(cls, path: Union[str, os.PathLike], normalize: bool = False, hidden_layers: Sequence[int] = (),
             **settings) -> "DialogueEmbedder":
        """From a directory: a trained model (its recorded `dialogue` settings: separator, roles,
        turn merging, input layout, pooling, max length) or any checkpoint `load_pretrained`
        reads. `settings` are `tfdialemb.inference_settings` names (e.g. `separator="eou"`,
        `dialogue_pooling="mean"`); one that contradicts the record is refused, as the commands do."""
        return cls.from_pretrained(path, normalize=normalize, hidden_layers=hidden_layers, **settings)

    @classmethod
    def from_pretrained(cls, pretrained: Union[Pretrained, str, os.PathLike], normalize: bool = False,
                        hidden_layers: Sequence[int] = (), **settings) -> "DialogueEmbedder":
        """From a directory (as `load`) or a loaded `Pretrained` (the settings' defaults, as the
        commands' --init_checkpoint), with the same arguments; the role and turn tables are used
        when the encoder has them."""
        encoder, tokenizer, resolved = inference_parts(pretrained, "dialogue", settings)
        return cls.from_settings(encoder, tokenizer, resolved, hidden_layers=hidden_layers, normalize=normalize)

    @classmethod
    def from_settings(cls, encoder: Encoder, tokenizer: BertTokenizer, settings,
                      hidden_layers: Sequence[int] = (), normalize: bool = False) -> "DialogueEmbedder":
        """From the `dialogue` settings of `tfdialemb.kind_registry`; the role and turn
        tables are used when the encoder has them."""
        return cls(encoder, tokenizer, max_length=settings["max_length"],
                   separator=f"[{settings['separator'].upper()}]",
                   role_turn_embeddings=has_role_turn_tables(encoder), num_roles=settings["num_roles"],
                   merge_consecutive_turns=settings["merge_consecutive_turns"],
                   speaker_prefix=settings["speaker_prefix"], final_separator=settings["final_separator"],
                   pooling=settings["dialogue_pooling"], hidden_layers=hidden_layers, normalize=normalize)

    @property
    def names(self):
        """The keys of every result: "interlocutor", "mean", "cls", "p1", "p2", ..., then
        "cls[-k]", "mean[-k]" per hidden layer."""
        return embedding_names(self.num_roles) + [hidden_state_name(pooling, layer) for layer in self.hidden_layers
                                                  for pooling in HIDDEN_STATE_POOLINGS]

    @tf.function(input_signature=[tf.RaggedTensorSpec([None, None], tf.string, ragged_rank=1),
                                  tf.RaggedTensorSpec([None, None], tf.int32, ragged_rank=1)],
                 reduce_retracing=True, autograph=False)
    def pack_batch(self, turns, speakers) -> DialogueInputs:
        """`turns` [B, (turns)] strings and `speakers` [B, (turns)] speaker ids (see the class)
        → the encoder's dense inputs, as the build writes them."""
        return self._pack(turns, speakers)

    @tf.function(input_signature=[tf.RaggedTensorSpec([None, None], tf.string, ragged_rank=1),
                                  tf.RaggedTensorSpec([None, None], tf.int32, ragged_rank=1)],
                 reduce_retracing=True, autograph=False)
    def embed_batch(self, turns, speakers):
        """`turns` [B, (turns)] strings and `speakers` [B, (turns)] speaker ids (see the class)
        → {name: float32 [B, H]}; an empty batch gives [0, H] each."""
        inputs = self._pack(turns, speakers)
        if not self.hidden_layers:
            states = encode_dialogues(self.encoder, *inputs, role_turn_embeddings=self.role_turn_embeddings,
                                      training=False)
            embeddings = dialogue_embeddings(states, inputs.mask, inputs.role_ids, self.num_roles)
        else:
            layers = encode_dialogue_layers(self.encoder, *inputs, role_turn_embeddings=self.role_turn_embeddings,
                                            training=False)
            embeddings = dialogue_embeddings(layers[-1], inputs.mask, inputs.role_ids, self.num_roles)
            for layer in self.hidden_layers:
                embeddings.update(hidden_state_embeddings(layers[layer], inputs.mask, layer))
        return {name: l2_normalized(value) for name, value in embeddings.items()} if self.normalize else embeddings

    def _pack(self, turns, speakers) -> DialogueInputs:
        speakers = roles_in_order_of_appearance(speakers)
        pieces = require_tokens(self.tokenizer.tokenize(turns.values, self.max_length), "turns")
        if self.merge_consecutive_turns:  # each turn checked before it joins its neighbours
            with tf.control_dependencies([pieces.flat_values]):
                turns, speakers = merge_consecutive_turns(turns, speakers)
            pieces = self.tokenizer.tokenize(turns.values, self.max_length)
        pieces = turns.with_values(pieces)
        roles = tf.minimum(speakers, self.num_roles - 1)
        if self.speaker_prefix:
            pieces = speaker_prefixed(pieces, roles, self.prefixes)
        return dense_dialogues(
            pack_dialogues(pieces, roles, self.tokenizer.cls_id, self.separator, self.max_length,
                           self.final_separator),
            self.tokenizer.pad_id)

    def embed(self, dialogues: Sequence[DialogueLike], batch_size: int = 16,
              on_batch: Optional[Callable[[int], None]] = None) -> Dict[str, np.ndarray]:
        """{name: [len(dialogues), hidden] float32}, in input order; `on_batch(n)` is told after
        each batch of n. Each dialogue is a `Dialogue`, a canonical JSON object or a list of turn
        texts (`as_dialogues`). Dialogues are sorted by length so each batch pads to its own longest."""
        dialogues = as_dialogues(dialogues)
        embed_batch = self._batch_function.for_batches(len(dialogues), batch_size)
        order = np.argsort([sum(len(t.text) for t in d.turns) for d in dialogues], kind="stable")
        hidden = self.encoder.encoder_config.hidden_size
        output = {name: np.zeros([len(dialogues), hidden], np.float32) for name in self.names}
        for start in range(0, len(dialogues), batch_size):
            index = order[start:start + batch_size]
            batch = [dialogues[i] for i in index]
            turns = tf.ragged.constant([[t.text for t in d.turns] for d in batch], tf.string)
            speakers = tf.ragged.constant([role_ids(d) for d in batch], tf.int32)
            for name, value in embed_batch(turns, speakers).items():
                output[name][index] = value.numpy()
            if on_batch is not None:
                on_batch(len(index))
        return output

    def encode(self, dialogues: Union[DialogueLike, Sequence[DialogueLike]], batch_size: int = 16,
               normalize_embeddings: bool = False, show_progress_bar: Optional[bool] = None,
               convert_to_numpy: bool = True, convert_to_tensor: bool = False):
        """The embedding the model serves (`pooling`), called as sentence-transformers'
        `encode`: one dialogue (a `Dialogue` or a canonical JSON object) gives one embedding
        [hidden], a list of dialogues (each also possibly a list of turn texts) [len, hidden]
        float32, numpy or a tf.Tensor as `SentenceEmbedder.encode` gives them."""
        single = isinstance(dialogues, (Dialogue, Mapping))
        items = as_dialogues([dialogues] if single else dialogues)
        rows = self.embed(items, batch_size, progress_callback(len(items), "dialogues", show_progress_bar))
        return batch_output(rows[self.pooling], single, convert_to_numpy, convert_to_tensor,
                            normalize=normalize_embeddings)


def as_dialogues(items: Sequence[DialogueLike]) -> List[Dialogue]:
    """Every item as a `Dialogue` (`dialogue.as_dialogue`; a list of turns gets its position as
    id), or one ValueError naming the first malformed item's position."""
    if isinstance(items, (str, bytes, Mapping, Dialogue)):
        raise ValueError(f"expected a list of dialogues, got one {type(items).__name__}")
    dialogues = []
    for position, item in enumerate(items):
        try:
            dialogues.append(as_dialogue(item, str(position)))
        except ValueError as e:
            raise ValueError(f"dialogue {position}: {e}") from None
    return dialogues


def checked_hidden_layers(layers: Sequence[int], num_layers: int) -> Tuple[int, ...]:
    """`layers` as distinct negative indices from the top (-1 the last layer ... -num_layers the
    first), or a ValueError naming the one out of range."""
    checked = tuple(dict.fromkeys(int(layer) for layer in layers))
    for layer in checked:
        if not -num_layers <= layer <= -1:
            raise ValueError(f"hidden layer {layer} is not one of the encoder's {num_layers} layers: give "
                             f"-1 (the last) down to {-num_layers} (the first)")
    return checked
