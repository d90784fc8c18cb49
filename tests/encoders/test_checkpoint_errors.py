"""A missing or mismatched file gives one message naming the directory, the expectation and the find."""
import json
import os
import shutil

import pytest

import tiny_bert
from tfdialemb.encoders import CheckpointError, ConfigError, detect_kind, load_pretrained


def _copy(src, dst, drop=()):
    shutil.copytree(src, dst)
    for name in drop:
        os.remove(os.path.join(dst, name))
    return str(dst)


def test_missing_directory(tmp_path):
    with pytest.raises(CheckpointError, match=r"does not exist; expected one of: tfdialemb"):
        load_pretrained(tmp_path / "nowhere")


def test_unrecognised_directory_lists_what_was_found(tmp_path):
    (tmp_path / "weights.bin").write_bytes(b"0")
    with pytest.raises(CheckpointError, match=r"not a checkpoint directory.*found \['weights.bin'\]"):
        detect_kind(str(tmp_path))


@pytest.mark.parametrize(
    "drop, message",
    [
        (["vocab.txt"], r"Hugging Face BERT checkpoint but lacks vocab.txt"),
        (["model.safetensors"], r"lacks model.safetensors or tf_model.h5"),
    ],
)
def test_hugging_face_missing_files(tmp_path, hf_safetensors_dir, drop, message):
    directory = _copy(hf_safetensors_dir, tmp_path / "d", drop)
    with pytest.raises(CheckpointError, match=message):
        load_pretrained(directory)


def test_pytorch_bin_only_explains_the_conversion(tmp_path, hf_safetensors_dir):
    directory = _copy(hf_safetensors_dir, tmp_path / "d", ["model.safetensors"])
    open(os.path.join(directory, "pytorch_model.bin"), "wb").close()
    with pytest.raises(CheckpointError, match=r"only pytorch_model.bin.*convert it"):
        load_pretrained(directory)


def test_vocab_size_disagreement(tmp_path, hf_safetensors_dir):
    directory = _copy(hf_safetensors_dir, tmp_path / "d")
    with open(os.path.join(directory, "vocab.txt"), "a") as f:
        f.write("extra\n")
    with pytest.raises(CheckpointError, match=r"vocab.txt has \d+ tokens but config.json says vocab_size"):
        load_pretrained(directory)


def test_config_that_does_not_fit_the_weights(tmp_path, hf_safetensors_dir):
    directory = _copy(hf_safetensors_dir, tmp_path / "d")
    config = dict(tiny_bert.HF_CONFIG, intermediate_size=40)
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(config, f)
    with pytest.raises(CheckpointError) as error:
        load_pretrained(directory)
    text = str(error.value)
    assert "model.safetensors: the weights do not fit the encoder config" in text
    assert "transformer/layer_0/intermediate/kernel: checkpoint (32, 37) vs config (32, 40)" in text


def test_truncated_weights_are_listed(tmp_path, tiny_state):
    state = {k: v for k, v in tiny_state.items() if not k.startswith("encoder.layer.1.")}
    directory = tiny_bert.write_hf_safetensors_dir(tmp_path, state)
    with pytest.raises(CheckpointError, match=r"missing 16 tensors: transformer/layer_1/"):
        load_pretrained(directory)


def test_unsupported_architecture(tmp_path, hf_safetensors_dir):
    directory = _copy(hf_safetensors_dir, tmp_path / "d")
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(dict(tiny_bert.HF_CONFIG, model_type="roberta"), f)
    with pytest.raises(ConfigError, match=r"config.json: model_type is 'roberta'"):
        load_pretrained(directory)


def test_google_directory_without_weights(tmp_path, tiny_state):
    directory = tiny_bert.write_google_dir(tmp_path, tiny_state)
    for name in os.listdir(directory):
        if name.startswith("bert_model.ckpt.data"):
            os.remove(os.path.join(directory, name))
    with pytest.raises(CheckpointError, match=r"bert_model.ckpt.data-\* is missing"):
        load_pretrained(directory)


def test_own_checkpoint_without_weights(tmp_path, hf_safetensors_dir):
    from tfdialemb.encoders import save_pretrained

    pretrained = load_pretrained(hf_safetensors_dir)
    saved = save_pretrained(pretrained.encoder, pretrained.tokenizer, tmp_path / "own")
    os.remove(os.path.join(saved, "checkpoint"))
    with pytest.raises(CheckpointError, match=r"tfdialemb checkpoint but lacks checkpoint"):
        load_pretrained(saved)


def test_lower_case_inferred_from_a_cased_vocabulary(tmp_path, tiny_state):
    directory = tiny_bert.write_google_dir(tmp_path, tiny_state)
    assert load_pretrained(directory).tokenizer.lower_case is True
    words = list(tiny_bert.WORDS)
    words[words.index("hello")] = "Hello"
    tiny_bert.write_vocab(directory, words)
    assert load_pretrained(directory).tokenizer.lower_case is False
    assert load_pretrained(directory, lower_case=True).tokenizer.lower_case is True


def test_masked_lm_checkpoint_without_pooler_loads(tmp_path, tiny_state, reference_model):
    """BertForMaskedLM files have no pooler: the encoder loads, the pooler is initialised as BERT
    initialises new weights (truncated normal, std 0.02; zero bias), not left at zero."""
    state = {k: v for k, v in tiny_state.items() if not k.startswith("pooler.")}
    directory = tiny_bert.write_hf_safetensors_dir(tmp_path, state, prefix="bert.")
    encoder = load_pretrained(directory).encoder
    import numpy as np
    ids = np.array([[2, 20, 21, 3]], np.int32)
    ours = encoder({"input_word_ids": ids, "input_mask": np.ones_like(ids)})["sequence_output"].numpy()
    expected = reference_model(input_ids=ids, training=False).last_hidden_state.numpy()
    np.testing.assert_allclose(ours, expected, atol=1e-5)
    pooler = {v.name.split("/")[-1].split(":")[0]: v.numpy() for v in encoder.bert.weights if "pooler" in v.name}
    assert 0.01 < pooler["kernel"].std() < 0.03 and np.abs(pooler["kernel"]).max() <= 2 * 0.02 + 1e-6
    assert not pooler["bias"].any()
