"""An inference kind defined here and nowhere else is one record (`InferenceKind`) beside its own
runtime and servable, each registered: `load` opens a checkpoint as it and `export --kind` writes
its SavedModel, with no edit to the library. The export runs in a subprocess that imports this
module and registers the kind first, as a user's own package would."""
import numpy as np
import pytest
import tensorflow as tf

from tfdialemb.inference.kinds import load, register_runtime, unregister_runtime
from tfdialemb.kind_registry import InferenceKind, register_kind, unregister_kind
from tfdialemb.serving import layout
from tfdialemb.serving.kinds import ServedKind, register_servable, unregister_servable
from registered_commands import run_registered

TOKEN_COUNTS = InferenceKind("toy_token_counts", "tokens per sentence, special tokens included",
                             ("max_length",), 16)


class TokenCounter(tf.Module):
    """Tokens per sentence as the encoder would read it: special tokens included, at most max_length."""

    def __init__(self, tokenizer, max_length):
        super().__init__()
        self.tokenizer, self.max_length = tokenizer, max_length

    @classmethod
    def from_settings(cls, encoder, tokenizer, settings):
        del encoder
        return cls(tokenizer, settings["max_length"])

    @tf.function(autograph=False, input_signature=[tf.TensorSpec([None], tf.string)])
    def count_batch(self, sentences):
        return tf.reduce_sum(tf.cast(self.tokenizer(sentences, max_length=self.max_length)["input_mask"], tf.int32),
                             axis=1)

    def count(self, sentences):
        return self.count_batch(tf.constant(list(sentences))).numpy()


def token_count_servable(counter, settings, sentences):
    """`serving_default`: `sentences` string [None] -> `token_counts` int32 [None]."""
    del settings
    module = tf.Module()
    module.tokenizer = counter.tokenizer

    @tf.function(autograph=False, input_signature=[tf.TensorSpec([None], tf.string, name="sentences")])
    def serve(batch):
        return {"token_counts": counter.count_batch(batch)}

    module.serve = serve
    records = [layout.predict_log(layout.SIGNATURE_KEY, {"sentences": np.array(batch, dtype=object)})
               for batch in layout.each_then_all(sentences)]
    return layout.Servable(module, {layout.SIGNATURE_KEY: serve}, records)


TOKEN_COUNT_SERVABLE = ServedKind("sentences", token_count_servable, one_request_per_input=True)


def register_toy():
    """Registers the toy kind, then its runtime and servable, as a user's own module would at import."""
    register_kind(TOKEN_COUNTS)
    register_runtime(TOKEN_COUNTS.name)(TokenCounter)
    register_servable(TOKEN_COUNTS.name, TOKEN_COUNT_SERVABLE)


@pytest.fixture(autouse=True)
def toy_registered():
    register_toy()
    yield
    unregister_servable(TOKEN_COUNTS.name)
    unregister_runtime(TOKEN_COUNTS.name)
    unregister_kind(TOKEN_COUNTS.name)


def test_a_kind_defined_in_a_test_loads_and_exports(tmp_path, hf_safetensors_dir):
    sentences = ["hello world", "book a taxi to the station tonight please", "ok"]
    counter = load(hf_safetensors_dir, TOKEN_COUNTS.name, {"max_length": 8})
    assert isinstance(counter, TokenCounter) and counter.max_length == 8
    pieces = [len(counter.tokenizer.tokenize(tf.constant([s])).flat_values) for s in sentences]
    np.testing.assert_array_equal(counter.count(sentences), [min(n + 2, 8) for n in pieces])
    assert load(hf_safetensors_dir, TOKEN_COUNTS.name).max_length == TOKEN_COUNTS.default_max_length

    warmup = tmp_path / "warmup.txt"
    warmup.write_text("".join(s + "\n" for s in sentences), encoding="utf-8")
    exported = run_registered(__file__, "export", f"--kind={TOKEN_COUNTS.name}",
                              f"--init_checkpoint={hf_safetensors_dir}", f"--export_dir={tmp_path / 'export'}",
                              "--max_length=8", f"--warmup_sentences={warmup}")
    assert f"kind: {TOKEN_COUNTS.name}" in exported.stdout and "warm-up: 3 sentences" in exported.stdout
    import tensorflow_text  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import

    serve = tf.saved_model.load(str(tmp_path / "export" / "1")).signatures["serving_default"]
    served = serve(sentences=tf.constant(sentences))["token_counts"].numpy()
    np.testing.assert_array_equal(served, counter.count(sentences))

    refused = run_registered(__file__, "export", f"--kind={TOKEN_COUNTS.name}",
                             f"--init_checkpoint={hf_safetensors_dir}", f"--export_dir={tmp_path / 'refused'}",
                             "--pooling=cls", status=2)
    assert f"--pooling do(es) not apply to --kind={TOKEN_COUNTS.name}" in refused.stderr
