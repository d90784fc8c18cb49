"""A method defined here and nowhere else — its example builder, its model with a trained head and
its spec — is trainable, evaluable and exportable through the commands, with no edit to the
library: the commands run in subprocesses that import this module and register it first, as a
user's own package would.
"""
import dataclasses
import json

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from tfdialemb.data.examples import ExampleBuilder, register, unregister
from tfdialemb.data.records import SEQUENCE
from tfdialemb.methods.models.base import Method
from tfdialemb.methods.spec import MethodSpec, register_method, unregister_method
from tfdialemb.core.options import Option
from registered_commands import run_registered



class NextTurnBuilder(ExampleBuilder):
    """(utterance, next utterance) pairs."""

    name = "toy_next_turn"
    schema = {"first": SEQUENCE, "second": SEQUENCE}

    @dataclasses.dataclass(frozen=True)
    class Params:
        pass

    def examples(self, dialogue, index, rng, pool):
        texts = [turn.text for turn in dialogue.turns]
        for first, second in zip(texts, texts[1:]):
            yield {"first": first, "second": second}


class NextTurnModel(Method):
    """In-batch softmax of head(E(first)) · E(second) / τ, the head a trained Dense layer."""

    def __init__(self, encoder, temperature, **kwargs):
        super().__init__(encoder, **kwargs)
        self.temperature = temperature
        width = encoder.encoder_config.hidden_size
        self.head = tf_keras.layers.Dense(width, name="toy_head")
        self.head.build([None, width])

    def per_example_loss(self, batch, training):
        first = self.head(self.encoder.embed({"input_word_ids": batch["first"],
                                              "input_mask": batch["first_mask"]}, training=training))
        second = self.encoder.embed({"input_word_ids": batch["second"], "input_mask": batch["second_mask"]},
                                    training=training)
        logits = tf.matmul(first, second, transpose_b=True) / self.temperature
        labels = tf.range(tf.shape(logits)[0])
        losses = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        return losses, {"accuracy": tf.cast(tf.equal(tf.argmax(logits, -1, output_type=tf.int32), labels),
                                            tf.float32)}


class NextTurnSpec(MethodSpec):
    name = "toy_next_turn"
    paper = "a test"
    builder = "toy_next_turn"
    options = (Option("toy_temperature", 0.5, "The toy's softmax temperature.", lower_bound=0.01),)
    defaults = {"batch_size": 4, "learning_rate": 1e-3, "freeze_layers": 0, "max_length": 16}
    offers = ("sentence",)

    def make_model(self, encoder, params):
        return NextTurnModel(encoder, params.toy_temperature)

    def inference_settings(self, params):
        return {"sentence": {"pooling": "mean"}}


def register_toy():
    """Registers the toy builder and method, as a user's own module would at import."""
    register(NextTurnBuilder)
    register_method(NextTurnSpec)


@pytest.fixture(autouse=True)
def toy_registered():
    register_toy()
    yield
    unregister(NextTurnBuilder.name)
    unregister_method(NextTurnSpec.name)


def _command(command, *flags):
    return run_registered(__file__, command, *flags)


def test_a_method_defined_in_a_test_trains_evaluates_and_exports(tmp_path, hf_safetensors_dir):
    from tiny_corpus import SR_SELECT_LINES, corpus

    from tfdialemb.dialogue import write_dialogues
    from tfdialemb.eval.semantic_retrieval import evaluate_semantic_retrieval
    from tfdialemb.inference.embedder import SentenceEmbedder
    from tfdialemb.model_dir import load_method

    write_dialogues(corpus(n=16, seed=1), str(tmp_path / "train.jsonl"))
    model_dir = tmp_path / "toy"
    trained = _command("train", "--method=toy_next_turn", f"--train_file={tmp_path / 'train.jsonl'}",
                       f"--model_dir={model_dir}", f"--init_checkpoint={hf_safetensors_dir}", "--max_steps=3",
                       "--num_shards=1", "--toy_temperature=0.25")
    assert "toy_temperature 0.25" in trained.stdout and "trained to step 3 of 3" in trained.stdout

    loaded = load_method(str(model_dir))
    assert isinstance(loaded.model, NextTurnModel) and loaded.model.temperature == 0.25
    assert loaded.config["builder"]["method"] == "toy_next_turn"
    head = loaded.model.head.kernel.numpy()
    assert not np.allclose(head, 0) and loaded.model.head.kernel.shape == (32, 32)

    eval_file = tmp_path / "sr.txt"
    eval_file.write_text("".join(line + "\n" for line in SR_SELECT_LINES), encoding="utf-8")
    _command("evaluate", "--task=sr", f"--eval_file={eval_file}", f"--model_dir={model_dir}",
             f"--output={tmp_path / 'report.json'}")
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["method"] == "toy_next_turn"
    embedder = SentenceEmbedder(loaded.encoder, loaded.tokenizer, max_length=16)
    expected = evaluate_semantic_retrieval(str(eval_file), embedder.embed)
    np.testing.assert_allclose(report["metrics"]["map"], expected["map"], atol=1e-6)

    exported = _command("export", f"--model_dir={model_dir}", f"--export_dir={tmp_path / 'export'}")
    assert "kind: sentence" in exported.stdout
    import tensorflow_text  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import

    serve = tf.saved_model.load(str(tmp_path / "export" / "1")).signatures["serving_default"]
    served = serve(sentences=tf.constant(["hello world", "book a taxi"]))["embeddings"].numpy()
    np.testing.assert_allclose(served, embedder.embed(["hello world", "book a taxi"]), atol=1e-5)
