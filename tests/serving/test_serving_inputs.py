"""What the served graphs take, in the embedders and in the signature functions of the SavedModels:
speakers renumbered in order of first appearance as training numbers them, a negative speaker and
a text without a token refused with the input named (one rule for every served text), and an
empty batch giving empty outputs."""
import numpy as np
import pytest
import tensorflow as tf
import tiny_bert
from tiny_corpus import TOKENIZER

from tfdialemb.dialogue import Dialogue, Turn
from tfdialemb.encoders import Encoder, EncoderConfig
from tfdialemb.inference.context_response import ContextResponseEncoder
from tfdialemb.inference.dialogue_embedder import DialogueEmbedder
from tfdialemb.inference.pair_scorer import PairScorer
from tfdialemb.methods.spec import get_method
from tfdialemb.serving import context_response, dialogue, selection
from tfdialemb.text.dialogue_packing import roles_in_order_of_appearance

MAX_LENGTH = 24
DIALOGUES = [
    Dialogue("a", (Turn("agent", "hello there"), Turn("user", "book a taxi"), Turn("agent", "fine"))),
    Dialogue("b", (Turn("user", "good morning"), Turn("user", "need a hotel"))),
    Dialogue("c", (Turn("x", "thanks"), Turn("y", "how are you"), Turn("z", "fine thanks"), Turn("y", "bye"))),
]
TURNS = [turn.text for d in DIALOGUES for turn in d.turns]
TURN_COUNTS = [3, 2, 4]
TRAINING_ROLES = [0, 1, 0] + [0, 0] + [0, 1, 2, 1]
"""`dialogue.role_ids` of DIALOGUES, worked out by hand: speakers numbered by first appearance."""
CLIENT_IDS = [7, 3, 7] + [1, 1] + [4, 0, 9, 0]
"""The same speakers under ids a client might hold (user ids, say)."""


def _strings(*texts):
    return tf.constant(list(texts), tf.string, shape=[len(texts)])


def _ints(*values):
    return tf.constant(list(values), tf.int32, shape=[len(values)])


@pytest.fixture(scope="module")
def encoder():
    tf.keras.utils.set_random_seed(4)
    return Encoder(EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG)).build_variables()


@pytest.fixture(scope="module", params=[False, True], ids=["turns", "merged_turns"])
def served_dialogues(request, encoder):
    """(DialogueEmbedder, its SavedModel signature function), with or without merging turns."""
    embedder = DialogueEmbedder(encoder, TOKENIZER, max_length=MAX_LENGTH, merge_consecutive_turns=request.param)
    return embedder, dialogue.dialogue_module(embedder).serve


def test_speaker_ids_are_renumbered_by_first_appearance_as_training_numbers_them(served_dialogues):
    embedder, serve = served_dialogues
    renumbered = roles_in_order_of_appearance(tf.RaggedTensor.from_row_lengths(CLIENT_IDS, TURN_COUNTS))
    assert renumbered.to_list() == [[0, 1, 0], [0, 0], [0, 1, 2, 1]]
    assert dialogue.dialogue_inputs(DIALOGUES)["speakers"].tolist() == TRAINING_ROLES
    as_trained = serve(_strings(*TURNS), _ints(*TURN_COUNTS), _ints(*TRAINING_ROLES))
    as_held = serve(_strings(*TURNS), _ints(*TURN_COUNTS), _ints(*CLIENT_IDS))
    for name, value in as_trained.items():
        np.testing.assert_array_equal(as_held[name].numpy(), value.numpy(), err_msg=name)
    np.testing.assert_allclose(as_trained["embeddings"].numpy(), embedder.embed(DIALOGUES)["interlocutor"],
                               atol=1e-5)
    # [1, 1] is one speaker, as [0, 0]; before renumbering it was the second role alone.
    one_speaker = [serve(_strings("hello", "fine"), _ints(2), _ints(*ids))["embeddings"].numpy() for ids in
                   ([1, 1], [0, 0])]
    np.testing.assert_array_equal(*one_speaker)


def test_a_negative_speaker_is_refused_naming_the_input(served_dialogues):
    embedder, serve = served_dialogues
    message = "speakers: every speaker id must be non-negative"
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        serve(_strings(*TURNS), _ints(*TURN_COUNTS), _ints(*CLIENT_IDS[:-1], -1))
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        embedder.embed_batch(tf.ragged.constant([["hello", "fine"]]), tf.ragged.constant([[0, -2]]))


def test_an_empty_dialogue_batch_gives_empty_outputs(served_dialogues):
    embedder, serve = served_dialogues
    outputs = serve(_strings(), _ints(), _ints())
    assert sorted(outputs) == ["embeddings", "p1", "p2"]
    assert all(value.shape == (0, tiny_bert.HF_CONFIG["hidden_size"]) for value in outputs.values())
    empty = tf.RaggedTensor.from_row_lengths(tf.constant([], tf.string), tf.constant([], tf.int64))
    views = embedder.embed_batch(empty, tf.RaggedTensor.from_row_lengths(tf.constant([], tf.int32),
                                                                         tf.constant([], tf.int64)))
    assert sorted(views) == sorted(embedder.names) and all(v.shape[0] == 0 for v in views.values())


@pytest.mark.parametrize("text", ["", " \u200b "])
def test_a_turn_without_a_token_is_refused_even_between_turns_of_its_speaker(served_dialogues, text):
    _, serve = served_dialogues
    with pytest.raises(tf.errors.InvalidArgumentError, match="turns: every text needs at least one token"):
        serve(_strings("hello", text, "fine"), _ints(3), _ints(0, 0, 0))


@pytest.fixture(scope="module")
def context_response_module(encoder):
    spec = get_method("context_response")
    model = spec.make_model(encoder, spec.resolve({"context": 3}))
    return context_response.context_response_module(ContextResponseEncoder(model, TOKENIZER, context=3,
                                                                            max_length=MAX_LENGTH))


@pytest.fixture(scope="module")
def selection_module(encoder):
    spec = get_method("fgc")
    return selection.selection_module(PairScorer(spec.make_model(encoder, spec.resolve({})), TOKENIZER,
                                                 max_length=MAX_LENGTH))


def _signatures(context_response_module, selection_module):
    """{what: (signature function, inputs with `{text}` where the text under test goes)}."""
    cr, sel = context_response_module, selection_module
    return {
        "context_response turns": (cr.serve, "turns", lambda t: (_strings("hello", t), _ints(2))),
        "context_response responses": (cr.responses, "responses", lambda t: (_strings("fine", t),)),
        "selection turns": (sel.serve, "turns", lambda t: (_strings("hello", t), _ints(2), _strings("fine"))),
        "selection responses": (sel.serve, "responses", lambda t: (_strings("hello"), _ints(1, 0), _strings("a", t))),
        "selection rank turns": (sel.rank, "turns", lambda t: (_strings(t, "hello"), _strings("fine"))),
        "selection rank candidates": (sel.rank, "candidates", lambda t: (_strings("hello"), _strings("fine", t))),
    }


@pytest.mark.parametrize("text", ["", " \u200b "])
def test_one_rule_for_texts_without_a_token_in_both_exports(context_response_module, selection_module, text):
    for what, (function, name, inputs) in _signatures(context_response_module, selection_module).items():
        function(*inputs("a text"))  # the same input with a token is served
        with pytest.raises(tf.errors.InvalidArgumentError, match=f"{name}: every text needs at least one token"):
            function(*inputs(text))
            pytest.fail(f"{what} served {text!r}")


def test_empty_batches_give_empty_outputs_in_both_exports(context_response_module, selection_module):
    cr, sel = context_response_module, selection_module
    assert cr.serve(_strings(), _ints())["embeddings"].shape == (0, 256)
    assert cr.responses(_strings())["embeddings"].shape == (0, 256)
    assert sel.serve(_strings(), _ints(), _strings())["probabilities"].shape == (0,)
    assert sel.rank(_strings("hello"), _strings())["scores"].shape == (0,)
