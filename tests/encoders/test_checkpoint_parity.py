"""The project's encoder holds the same function as transformers' TFBertModel for every layout."""
import numpy as np
import pytest
import tensorflow as tf

import tiny_bert
from tfdialemb.encoders import load_pretrained, save_pretrained

# Two rows, the second padded: outputs are compared at the valid positions only.
IDS = np.array([[2, 20, 21, 22, 23, 24, 25, 26, 3], [2, 30, 31, 32, 3, 0, 0, 0, 0]], np.int32)
MASK = (np.arange(IDS.shape[1]) < np.array([[9], [5]])).astype(np.int32)
TYPES = np.array([[0, 0, 0, 0, 0, 1, 1, 1, 1], [0, 0, 0, 1, 1, 0, 0, 0, 0]], np.int32)


def _ours(directory):
    encoder = load_pretrained(directory).encoder
    out = encoder({"input_word_ids": IDS, "input_mask": MASK, "input_type_ids": TYPES}, training=False)
    return out["sequence_output"].numpy()


def _reference(model):
    out = model(input_ids=IDS, attention_mask=MASK, token_type_ids=TYPES, training=False)
    return out.last_hidden_state.numpy()


def _assert_same_at_valid(ours, reference):
    valid = MASK.astype(bool)
    np.testing.assert_allclose(ours[valid], reference[valid], atol=1e-5, rtol=0)


def test_pytorch_safetensors_matches_transformers(hf_safetensors_dir, reference_model):
    _assert_same_at_valid(_ours(hf_safetensors_dir), _reference(reference_model))


def test_unpadded_row_matches_transformers(hf_safetensors_dir, reference_model):
    encoder = load_pretrained(hf_safetensors_dir).encoder
    ours = encoder({"input_word_ids": IDS[1:, :5], "input_mask": MASK[1:, :5]}, training=False)
    ref = reference_model(input_ids=IDS[1:, :5], training=False).last_hidden_state
    np.testing.assert_allclose(ours["sequence_output"].numpy(), ref.numpy(), atol=1e-5, rtol=0)
    np.testing.assert_allclose(
        ours["pooled_output"].numpy(),
        reference_model(input_ids=IDS[1:, :5], training=False).pooler_output.numpy(),
        atol=1e-5,
        rtol=0,
    )


def test_prefixed_safetensors_of_a_pretraining_model(tmp_path, tiny_state, reference_model):
    """BertForPreTraining files prefix every tensor with `bert.` and add the `cls.` heads."""
    state = dict(tiny_state)
    state["cls.predictions.bias"] = np.zeros(tiny_bert.HF_CONFIG["vocab_size"], np.float32)
    directory = tiny_bert.write_hf_safetensors_dir(tmp_path, state, prefix="bert.")
    _assert_same_at_valid(_ours(directory), _reference(reference_model))


def test_tf_h5_matches_transformers(tmp_path, reference_model):
    directory = tiny_bert.write_hf_h5_dir(tmp_path, reference_model)
    _assert_same_at_valid(_ours(directory), _reference(reference_model))


def test_google_tf1_checkpoint_matches_transformers(tmp_path, tiny_state):
    # Google's BERT uses the tanh approximation of GELU; transformers calls it "gelu_new".
    reference = tiny_bert.transformers_model(tiny_state, dict(tiny_bert.HF_CONFIG, hidden_act="gelu_new"))
    directory = tiny_bert.write_google_dir(tmp_path, tiny_state)
    pretrained = load_pretrained(directory)
    assert pretrained.kind == "google"
    assert pretrained.encoder.encoder_config.hidden_act == "gelu_approximate"
    _assert_same_at_valid(_ours(directory), _reference(reference))


def test_own_checkpoint_round_trip(tmp_path, hf_safetensors_dir, reference_model):
    pretrained = load_pretrained(hf_safetensors_dir)
    saved = save_pretrained(pretrained.encoder, pretrained.tokenizer, tmp_path / "own")
    reloaded = load_pretrained(saved)
    assert reloaded.kind == "tfdialemb"
    assert reloaded.tokenizer.vocab == pretrained.tokenizer.vocab
    assert reloaded.tokenizer.config() == pretrained.tokenizer.config()
    _assert_same_at_valid(_ours(saved), _reference(reference_model))


def test_own_checkpoint_with_role_embeddings_round_trip(tmp_path, hf_safetensors_dir):
    pretrained = load_pretrained(hf_safetensors_dir, role_vocab_size=3, turn_vocab_size=5)
    saved = save_pretrained(pretrained.encoder, pretrained.tokenizer, tmp_path / "own")
    reloaded = load_pretrained(saved).encoder
    inputs = {"input_word_ids": IDS, "input_mask": MASK,
              "role_ids": IDS % 3, "turn_ids": IDS % 5}
    np.testing.assert_array_equal(
        reloaded(inputs)["sequence_output"].numpy(),
        pretrained.encoder(inputs)["sequence_output"].numpy(),
    )


def test_saved_directory_is_relocatable(tmp_path, hf_safetensors_dir):
    pretrained = load_pretrained(hf_safetensors_dir)
    saved = save_pretrained(pretrained.encoder, pretrained.tokenizer, tmp_path / "a")
    moved = tmp_path / "b"
    tf.io.gfile.rename(saved, str(moved))
    assert load_pretrained(moved).kind == "tfdialemb"


def test_save_refuses_a_non_empty_directory(tmp_path, hf_safetensors_dir):
    pretrained = load_pretrained(hf_safetensors_dir)
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "keep.txt").write_text("mine")
    with pytest.raises(FileExistsError):
        save_pretrained(pretrained.encoder, pretrained.tokenizer, tmp_path / "x")


def test_load_tokenizer_reads_what_load_pretrained_builds(tmp_path, hf_safetensors_dir, tiny_state):
    from tfdialemb.encoders import load_tokenizer

    own = save_pretrained(*[getattr(load_pretrained(hf_safetensors_dir), k) for k in ("encoder", "tokenizer")],
                          tmp_path / "own")
    google = tiny_bert.write_google_dir(tmp_path, tiny_state)
    for directory in (hf_safetensors_dir, google, own):
        alone, full = load_tokenizer(directory), load_pretrained(directory).tokenizer
        assert alone.vocab == full.vocab and alone.config() == full.config()
    assert load_tokenizer(own, lower_case=False).lower_case is False
