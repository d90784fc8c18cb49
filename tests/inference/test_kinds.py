"""The inference kinds are one record each (`tfdialemb.kind_registry.KINDS`) that the runtimes, the
servables and the method specs all key into, and a kind's `needs_head` decides what its runtime is
built from."""
import types

import pytest

from tfdialemb.inference.kinds import register_runtime, runtime_class
from tfdialemb.inference_settings import SETTINGS
from tfdialemb.kind_registry import KINDS, InferenceKind, register_kind
from tfdialemb.methods.spec import all_specs
from tfdialemb.model_dir import ModelSource
from tfdialemb.serving.kinds import ServedKind, register_servable, served_kind


def test_every_kind_has_a_runtime_and_a_servable():
    for name in KINDS:
        assert hasattr(runtime_class(name), "from_settings"), name
        assert served_kind(name).warmup in ("sentences", "dialogues"), name


def test_kinds_read_known_settings_and_methods_offer_known_kinds():
    for kind in KINDS.values():
        assert set(kind.settings) <= set(SETTINGS), kind.name
        assert "max_length" in kind.settings and kind.default_max_length > 0
    for spec in all_specs():
        assert set(spec.offers) <= set(KINDS), spec.name


def test_a_record_is_refused_for_an_unknown_setting_or_a_taken_name_and_so_are_parts_of_no_kind():
    with pytest.raises(ValueError, match="unknown settings \\['colour'\\]"):
        register_kind(InferenceKind("painted", "colours", ("colour", "max_length"), 16))
    with pytest.raises(ValueError, match="must read max_length"):
        register_kind(InferenceKind("painted", "colours", ("pooling",), 16))
    with pytest.raises(ValueError, match="'sentence' is already registered"):
        register_kind(InferenceKind("sentence", "another", ("max_length",), 16))
    with pytest.raises(ValueError, match="'painted', not an inference kind"):
        register_runtime("painted")(type("Painter", (), {}))
    with pytest.raises(ValueError, match="'painted', not an inference kind"):
        register_servable("painted", ServedKind("sentences", lambda runtime, settings, inputs: None))
    with pytest.raises(ValueError, match="no runtime computes the inference kind 'painted'"):
        runtime_class("painted")


def test_a_head_kind_is_built_from_the_trained_method_and_the_others_from_the_encoder(tmp_path):
    source = ModelSource(str(tmp_path))
    source.__dict__["trained"] = types.SimpleNamespace(model="method with heads", tokenizer="tokenizer")
    source.__dict__["pretrained"] = types.SimpleNamespace(encoder="encoder", tokenizer="tokenizer")
    heads = {name for name, kind in KINDS.items() if kind.needs_head}
    assert heads == {"selection", "context_response"}
    for name in KINDS:
        expected = "method with heads" if name in heads else "encoder"
        assert source.serving_parts(name) == (expected, "tokenizer")
