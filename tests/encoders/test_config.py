import pytest

import tiny_bert
from tfdialemb.encoders import ConfigError, EncoderConfig


def test_hugging_face_gelu_is_exact_and_google_gelu_is_tanh():
    assert EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG).hidden_act == "gelu"
    assert EncoderConfig.from_huggingface(dict(tiny_bert.HF_CONFIG, hidden_act="gelu_new")).hidden_act == "gelu_approximate"
    assert EncoderConfig.from_google(tiny_bert.HF_CONFIG).hidden_act == "gelu_approximate"


def test_fields_read_from_hugging_face():
    config = EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG)
    assert (config.num_layers, config.hidden_size, config.intermediate_size) == (2, 32, 37)
    assert (config.max_position_embeddings, config.vocab_size) == (64, len(tiny_bert.WORDS))


def test_dict_round_trip_and_unknown_keys():
    config = EncoderConfig(vocab_size=10, hidden_size=8, num_attention_heads=2, role_vocab_size=3)
    assert EncoderConfig.from_dict(config.to_dict()) == config
    with pytest.raises(ConfigError, match=r"unknown encoder config keys: \['colour'\]"):
        EncoderConfig.from_dict(dict(config.to_dict(), colour=1))


@pytest.mark.parametrize(
    "change, message",
    [
        ({"layer_norm_eps": 1e-5}, "layer_norm_eps 1e-05 differs"),
        ({"hidden_act": "swish"}, "hidden_act 'swish' is not supported"),
        ({"position_embedding_type": "relative_key"}, "position_embedding_type 'relative_key'"),
        ({"num_attention_heads": 5}, "not divisible by num_attention_heads 5"),
    ],
)
def test_unsupported_values_are_named(change, message):
    with pytest.raises(ConfigError, match=message):
        EncoderConfig.from_huggingface(dict(tiny_bert.HF_CONFIG, **change))


def test_missing_required_key_is_named():
    values = {k: v for k, v in tiny_bert.HF_CONFIG.items() if k != "num_hidden_layers"}
    with pytest.raises(ConfigError, match="bert_config.json: required key 'num_hidden_layers' is missing"):
        EncoderConfig.from_google(values)
