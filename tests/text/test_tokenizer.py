"""Packing, special tokens and in-graph use (tf.function, tf.data, SavedModel)."""
import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text as tf_text

import tiny_bert
from tfdialemb.text import BertTokenizer
from tfdialemb.text.tokenizer import _special_rows_replaced, _wordpiece_model

VOCAB = list(tiny_bert.WORDS)
ID = {w: i for i, w in enumerate(VOCAB)}


@pytest.fixture(scope="module")
def tokenizer():
    return BertTokenizer(VOCAB, lower_case=True)


def test_project_special_tokens_use_unused_slots_in_text_and_by_name(tokenizer):
    assert tokenizer.token_id("[EOT]") == ID["[unused0]"]
    assert tokenizer.token_id("[E]") == ID["[unused7]"]
    ids = tokenizer.tokenize(["hello [EOT] world [EOU]", "[B1] [O] fine"]).to_list()
    assert ids == [[ID["hello"], ID["[unused0]"], ID["world"], ID["[unused1]"]],
                   [ID["[unused4]"], ID["[unused6]"], ID["fine"]]]
    with pytest.raises(KeyError):
        tokenizer.token_id("[NOPE]")


def test_pack_hand_worked(tokenizer):
    packed = tokenizer(["hello world", "good"], ["how are you", "fine"], max_length=7)
    cls, sep = ID["[CLS]"], ID["[SEP]"]
    # Row 0 needs 2 + 3 + 3 = 8 tokens, so round-robin trimming drops "you".
    np.testing.assert_array_equal(packed["input_word_ids"].numpy(), [
        [cls, ID["hello"], ID["world"], sep, ID["how"], ID["are"], sep],
        [cls, ID["good"], sep, ID["fine"], sep, 0, 0]])
    np.testing.assert_array_equal(packed["input_type_ids"].numpy(),
                                  [[0, 0, 0, 0, 1, 1, 1], [0, 0, 0, 1, 1, 0, 0]])
    np.testing.assert_array_equal(packed["input_mask"].numpy(),
                                  [[1] * 7, [1, 1, 1, 1, 1, 0, 0]])


def test_batches_pad_to_their_longest_row_unless_a_length_is_fixed(tokenizer):
    assert tokenizer(["hello", "hello world"], max_length=32)["input_word_ids"].shape == (2, 4)
    fixed = tokenizer(["hello", "hello world"], max_length=32, pad_to=32)
    assert fixed["input_word_ids"].shape == (2, 32) and fixed["input_mask"].numpy().sum() == 7


def test_max_length_too_small(tokenizer):
    with pytest.raises(ValueError, match="leaves no room for 2 segment"):
        tokenizer(["a"], ["b"], max_length=4)


def test_same_ids_in_eager_tf_function_and_tf_data(tokenizer):
    texts = ["Hello, world!", "中文 你好", "naive café"]
    eager = tokenizer(texts, max_length=16, pad_to=16)["input_word_ids"].numpy()

    graph = tf.function(lambda t: tokenizer(t, max_length=16, pad_to=16))(tf.constant(texts))
    np.testing.assert_array_equal(graph["input_word_ids"].numpy(), eager)

    dataset = tf.data.Dataset.from_tensor_slices(texts).batch(3).map(
        lambda t: tokenizer(t, max_length=16, pad_to=16))
    np.testing.assert_array_equal(next(iter(dataset))["input_word_ids"].numpy(), eager)


def test_saved_model_round_trip(tmp_path, tokenizer):
    module = tf.Module()
    module.tokenizer = tokenizer
    module.serve = tf.function(
        lambda t: tokenizer(t, max_length=16, pad_to=16),
        input_signature=[tf.TensorSpec([None], tf.string)],
    )
    tf.saved_model.save(module, str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))
    texts = tf.constant(["Hello [EOT] good morning!", "do es"])
    np.testing.assert_array_equal(
        loaded.serve(texts)["input_word_ids"].numpy(),
        tokenizer(texts, max_length=16, pad_to=16)["input_word_ids"].numpy(),
    )


def test_vocabulary_without_bert_specials_is_rejected():
    with pytest.raises(ValueError, match=r"lacks BERT's special tokens \['\[MASK\]'\]"):
        BertTokenizer([w for w in VOCAB if w != "[MASK]"], lower_case=True)


def test_wordpiece_model_pieces_words_as_tensorflow_texts_own_constructor_builds_it():
    words = tf.constant(["hello", "helloworld", "unaffable", "zzz", "x" * 30, "##ing", "[UNK]"])
    ours = tf_text.FastWordpieceTokenizer(model_buffer=_wordpiece_model(VOCAB, 5), token_out_type=tf.int32)
    theirs = tf_text.FastWordpieceTokenizer(vocab=VOCAB, suffix_indicator="##", max_bytes_per_word=20,
                                            token_out_type=tf.int32, unknown_token="[UNK]", no_pretokenization=True)
    assert ours.tokenize(words).to_list() == theirs.tokenize(words).to_list()


def test_special_rows_are_replaced_by_their_one_id_hand_worked():
    pieces = tf.ragged.constant([[5, 6], [7, 8, 9], [], [10], [11, 12]], tf.int32)
    special = tf.constant([-1, 3, -1, 4, -1], tf.int32)
    assert _special_rows_replaced(pieces, special).to_list() == [[5, 6], [3], [], [4], [11, 12]]
    only_special = _special_rows_replaced(tf.ragged.constant([[1, 2], [3]], tf.int32), tf.constant([8, 9]))
    assert only_special.to_list() == [[8], [9]]
    none = _special_rows_replaced(tf.ragged.constant([], tf.int32, ragged_rank=1), tf.zeros([0], tf.int32))
    assert none.to_list() == []
