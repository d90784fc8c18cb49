"""The fill-mask model: loaded from each directory kind that holds a masked-LM head, its batched
top-k against transformers' own masked LM, the error for a directory without a head; and the
token operations' flags, which are their constructors' arguments."""
import inspect

import numpy as np
import pytest

import tiny_bert
from tiny_mlm import token_ids
from tfdialemb.augment.fill_mask import FillMaskModel
from tfdialemb.augment.mask_filling import MaskFilling
from tfdialemb.augment.token_insertion import TokenInsertion
from tfdialemb.augment.token_replacement import TokenReplacement
from tfdialemb.encoders import CheckpointError, load_pretrained

SEQUENCES = [token_ids("[CLS]", "hello", "[MASK]", "world", "[SEP]"),
             token_ids("[CLS]", "[MASK]", "book", "a", "taxi", "[MASK]", "please", "[SEP]", "how", "are", "you", "?",
                       "[SEP]"),
             token_ids("[CLS]", "good", "[MASK]", "[SEP]")]
POSITIONS = [[2], [1, 5], [2]]


def _expected_top_k(logits, k):
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    order = np.argsort(-probs, axis=-1, kind="stable")[..., :k]
    return order, np.take_along_axis(probs, order, axis=-1)


@pytest.mark.parametrize("operation", [TokenInsertion, TokenReplacement])
def test_each_flag_of_a_token_operation_is_a_constructor_argument_with_its_default(operation):
    parameters = {**inspect.signature(MaskFilling).parameters, **inspect.signature(operation).parameters}
    # rate, top_k and min_fill_prob: each operation passes its own flag's value (e.g. replace_top_k).
    internal = {"fill_mask_model", "seed", "rate", "top_k", "min_fill_prob", "fill_options"} - {
        o.name for o in operation.options}
    assert {o.name: o.default for o in operation.options} == {
        name: p.default for name, p in parameters.items() if name not in internal}


def test_top_k_of_a_hugging_face_masked_lm_matches_transformers(random_mlm, tiny_state):
    """Three sequences of different lengths and mask counts in batches of two, each padded to its
    own longest; a sequence without masks gets no prediction."""
    reference = tiny_bert.transformers_model(tiny_bert.with_heads(tiny_state, tiny_bert.random_mlm_head()),
                                             model_class="TFBertForMaskedLM")
    unmasked = token_ids("[CLS]", "fine", "thanks", "[SEP]")
    results = random_mlm.top_k(SEQUENCES[:2] + [unmasked] + SEQUENCES[2:], POSITIONS[:2] + [[]] + POSITIONS[2:],
                               k=4, batch_size=2)
    assert results[2][0].shape == results[2][1].shape == (0, 4)
    for sequence, positions, (ids, probs) in zip(SEQUENCES, POSITIONS, results[:2] + results[3:]):
        logits = reference(input_ids=np.array([sequence]), training=False).logits.numpy()[0, positions]
        expected_ids, expected_probs = _expected_top_k(logits.astype(np.float64), 4)
        np.testing.assert_array_equal(ids, expected_ids)
        np.testing.assert_allclose(probs, expected_probs, rtol=1e-4, atol=1e-7)


def test_a_pretraining_model_directory_loads_with_its_head(tmp_path, hf_safetensors_dir):
    """A directory as `python -m tfdialemb.pretrain --objective=mlm` writes it (the checkpoint
    root holds the method model) predicts with the head it was trained with."""
    from tfdialemb.encoders.checkpoint import checkpoint_directory
    from tfdialemb.methods.models.mlm import MaskedLanguageModel

    pretrained = load_pretrained(hf_safetensors_dir)
    trained = MaskedLanguageModel(pretrained.encoder)
    trained.masked_lm.bias.assign(np.linspace(-2, 2, len(tiny_bert.WORDS)).astype(np.float32))
    directory = str(tmp_path / "pretrained")
    with checkpoint_directory(directory, trained.encoder, pretrained.tokenizer, number=3, model=trained):
        pass
    inputs = {"input_word_ids": np.array([SEQUENCES[1]], np.int32),
              "input_mask": np.ones([1, len(SEQUENCES[1])], np.int32),
              "masked_lm_positions": np.array([POSITIONS[1]], np.int32)}
    expected_ids, expected_probs = _expected_top_k(trained(inputs, training=False).numpy()[0].astype(np.float64), 3)
    [(ids, probs)] = FillMaskModel.load(directory).top_k(SEQUENCES[1:2], POSITIONS[1:2], k=3, batch_size=4)
    np.testing.assert_array_equal(ids, expected_ids)
    np.testing.assert_allclose(probs, expected_probs, rtol=1e-4)


def test_a_directory_without_a_masked_lm_head_is_refused_with_what_to_give(hf_safetensors_dir):
    with pytest.raises(CheckpointError) as error:
        FillMaskModel.load(hf_safetensors_dir)
    message = str(error.value)
    assert hf_safetensors_dir in message and "has no masked-LM head" in message
    assert "BertForMaskedLM" in message and "python -m tfdialemb.pretrain --objective=mlm" in message


def test_a_sequence_longer_than_the_model_is_refused(controlled_mlm):
    too_long = [2] + [20] * controlled_mlm.max_length + [3]
    with pytest.raises(ValueError, match="takes at most 64"):
        controlled_mlm.top_k([too_long], [[1]], k=2, batch_size=1)
