"""The inference kinds are one table (`tfdialemb.inference_kinds.KINDS`) that the runtime table, the
servable table and the method specs all key into, and a kind's `needs_head` decides what its
runtime is built from."""
import types

from tfdialemb.inference.kinds import RUNTIMES
from tfdialemb.inference_kinds import KINDS, SETTINGS
from tfdialemb.methods.spec import all_specs
from tfdialemb.model_dir import ModelSource
from tfdialemb.serving.kinds import SERVABLES


def test_every_kind_has_a_runtime_and_a_servable_and_nothing_else_does():
    assert set(RUNTIMES) == set(KINDS) == set(SERVABLES)


def test_kinds_read_known_settings_and_methods_offer_known_kinds():
    for kind in KINDS.values():
        assert set(kind.settings) <= set(SETTINGS), kind.name
        assert "max_length" in kind.settings and kind.default_max_length > 0
    for spec in all_specs():
        assert set(spec.offers) <= set(KINDS), spec.name


def test_a_head_kind_is_built_from_the_trained_method_and_the_others_from_the_encoder(tmp_path):
    source = ModelSource(str(tmp_path))
    source.__dict__["trained"] = types.SimpleNamespace(model="method with heads", tokenizer="tokenizer")
    source.__dict__["pretrained"] = types.SimpleNamespace(encoder="encoder", tokenizer="tokenizer")
    heads = {name for name, kind in KINDS.items() if kind.needs_head}
    assert heads == {"selection", "context_response"}
    for name in KINDS:
        expected = "method with heads" if name in heads else "encoder"
        assert source.serving_parts(name) == (expected, "tokenizer")
