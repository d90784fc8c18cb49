"""DialogueEmbedder: in-graph packing equals the build's, pooling equals a numpy derivation."""
import logging

import numpy as np
import pytest
import tensorflow as tf
import tiny_bert
from tiny_corpus import TOKENIZER, corpus

from tfdialemb.data.build import BuildOptions, build
from tfdialemb.data.examples import make_builder
from tfdialemb.data.pipeline import make_dataset
from tfdialemb.dialogue import Dialogue, Turn, write_dialogues
from tfdialemb.encoders import Encoder, EncoderConfig
from tfdialemb.inference.dialogue_embedder import DialogueEmbedder
from tfdialemb.methods.models.dial2vec import Dial2vecModel

W = tiny_bert.WORDS.index
CONFIG = EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG)
NAMES = ["interlocutor", "mean", "cls", "p1", "p2"]


def _encoder(**changes):
    tf.keras.utils.set_random_seed(5)
    return Encoder(CONFIG.replace(**changes)).build_variables()


def _dialogues():
    """Two-party dialogues of varied lengths, a three-party one and one cut by max_length."""
    extra = [Dialogue("three", (Turn("a", "hello"), Turn("b", "how are you"), Turn("c", "fine thanks"),
                                Turn("a", "good"))),
             Dialogue("long", tuple(Turn("ab"[i % 2], "book a taxi please to the hotel") for i in range(6)))]
    return corpus(n=9, seed=8) + extra


@pytest.fixture(scope="module")
def embedder():
    """Defaults: [SEP], no role/turn tables, max_length 512 clamped to the tiny BERT's 64."""
    return DialogueEmbedder(_encoder(), TOKENIZER)


def test_equals_the_build_path_and_the_model(tmp_path):
    """[EOU] separators and role/turn tables (turn ids past the 4-row table are clipped)."""
    separator = "[EOU]"
    dialogues = _dialogues()
    write_dialogues(dialogues, str(tmp_path / "d.jsonl"))
    build(str(tmp_path / "d.jsonl"), str(tmp_path / "built"), make_builder("dial2vec", {"negatives": 1}), TOKENIZER,
          BuildOptions(max_length=20, num_shards=1, merge_consecutive_turns=False, min_turns=1,
                       dialogue_separator=separator))
    encoder = _encoder(role_vocab_size=2, turn_vocab_size=4)
    model = Dial2vecModel(encoder, role_turn_embeddings=True)
    expected = {name: [] for name in NAMES}
    for batch in make_dataset(str(tmp_path / "built"), 4, training=False):
        positive = [batch[k][:, 0] for k in ("samples", "samples_mask", "samples_turn_ids", "samples_role_ids")]
        assert positive[2].numpy().max() >= 4
        for name, value in model.embed_all(*positive).items():
            expected[name].append(value.numpy())
        np.testing.assert_array_equal(model.embed(*positive, pooling="p2").numpy(), expected["p2"][-1])
    embedder = DialogueEmbedder(encoder, TOKENIZER, max_length=20, separator=separator, role_turn_embeddings=True)
    seen = []
    got = embedder.embed(dialogues, batch_size=3, on_batch=seen.append)
    assert seen == [3, 3, 3, 2]
    # The build wrote its examples in a shuffled order: each row of the embedder is matched with
    # its nearest built row (one to one), then every pooling compares in that order.
    built = {name: np.concatenate(rows) for name, rows in expected.items()}
    order = ((got[NAMES[0]][:, None] - built[NAMES[0]][None]) ** 2).sum(-1).argmin(axis=1)
    assert sorted(order.tolist()) == list(range(11))
    for name in NAMES:
        assert got[name].shape == (11, 32) and got[name].dtype == np.float32
        np.testing.assert_allclose(got[name], built[name][order], atol=1e-5, err_msg=name)


def test_pooling_equals_numpy_from_the_sequence_output(embedder):
    encoder = embedder.encoder
    dialogues = [Dialogue("x", (Turn("u", "hello world"), Turn("s", "how are you"), Turn("u", "fine"))),
                 Dialogue("y", (Turn("s", "thanks"),)),
                 Dialogue("z", (Turn("a", "good"), Turn("b", "morning"), Turn("c", "taxi")))]
    got = embedder.embed(dialogues, batch_size=2)
    packed = [  # by hand: [CLS] t_0 [SEP] t_1 ..., roles by first appearance, the third speaker folded into 1
        (["[CLS]", "hello", "world", "[SEP]", "how", "are", "you", "[SEP]", "fine"], [0, 0, 0, 0, 1, 1, 1, 1, 0]),
        (["[CLS]", "thanks"], [0, 0]),
        (["[CLS]", "good", "[SEP]", "morning", "[SEP]", "taxi"], [0, 0, 0, 1, 1, 1]),
    ]
    for n, (words, roles) in enumerate(packed):
        ids = np.array([[W(w) for w in words]], np.int32)
        states = encoder({"input_word_ids": ids, "input_mask": np.ones_like(ids)})["sequence_output"].numpy()[0]
        roles = np.array(roles)
        p1 = states[roles == 0].mean(0)
        p2 = states[roles == 1].mean(0) if (roles == 1).any() else np.zeros(32)
        expected = {"interlocutor": p1 + p2, "mean": states.mean(0), "cls": states[0], "p1": p1, "p2": p2}
        for name, value in expected.items():
            np.testing.assert_allclose(got[name][n], value, atol=1e-5, err_msg=f"{name} of dialogue {n}")


def test_max_length_is_clamped_and_bad_arguments_fail(embedder, caplog):
    encoder = embedder.encoder
    assert embedder.max_length == tiny_bert.HF_CONFIG["max_position_embeddings"] == 64
    with caplog.at_level(logging.WARNING):
        DialogueEmbedder(encoder, TOKENIZER, max_length=100)
    assert "max_length 100 exceeds the encoder's 64 positions" in caplog.text
    assert {k: v.shape for k, v in embedder.embed([]).items()} == {name: (0, 32) for name in NAMES}
    with pytest.raises(ValueError, match="separator must be one of"):
        DialogueEmbedder(encoder, TOKENIZER, separator="[EOT]")
    with pytest.raises(ValueError, match="role_vocab_size and turn_vocab_size"):
        DialogueEmbedder(encoder, TOKENIZER, role_turn_embeddings=True)
    with pytest.raises(ValueError, match="batch_size must be positive"):
        embedder.embed(_dialogues(), batch_size=0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="non-negative"):
        embedder.embed_batch(tf.ragged.constant([["hello"]]), tf.ragged.constant([[-1]], tf.int32))
