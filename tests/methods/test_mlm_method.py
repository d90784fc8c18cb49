"""MaskedLanguageModel: per-sequence masked-LM loss and accuracy, tied head, and training."""
import numpy as np
import pytest
import tensorflow as tf
import tiny_bert
from official.modeling import activations
from tiny_corpus import TOKENIZER, corpus

from tfdialemb.data.build import BuildOptions, build
from tfdialemb.data.examples import make_builder
from tfdialemb.data.masking import add_masks
from tfdialemb.data.pipeline import make_dataset
from tfdialemb.dialogue import write_dialogues
from tfdialemb.encoders import Encoder, EncoderConfig
from tfdialemb.encoders.gelu import gelu
from tfdialemb.layers.masked_lm_head import masked_lm_variables
from tfdialemb.methods.models.mlm import MaskedLanguageModel
from tfdialemb.training.loop import LoopConfig, TrainingLoop
from tfdialemb.training.optimizer import OptimizerConfig

CONFIG = EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG)


def _model(config=CONFIG):
    tf.keras.utils.set_random_seed(3)
    return MaskedLanguageModel(Encoder(config))


def test_loss_and_accuracy_are_per_sequence_weighted_means():
    model = _model()
    batch = {
        "input_word_ids": np.array([[2, 4, 20, 4, 3], [2, 4, 3, 0, 0], [2, 3, 0, 0, 0]], np.int32),
        "input_mask": np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 1, 0, 0, 0]], np.int32),
        "masked_lm_positions": np.array([[1, 3, 0], [1, 0, 0], [0, 0, 0]], np.int32),
        "masked_lm_ids": np.array([[21, 22, 0], [30, 0, 0], [0, 0, 0]], np.int32),
        "masked_lm_weights": np.array([[1, 1, 0], [1, 0, 0], [0, 0, 0]], np.float32),
    }
    losses, metrics = model.per_example_loss(batch, training=False)

    logits = model(batch, training=False).numpy().astype(np.float64)
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    labels = batch["masked_lm_ids"]
    cross_entropy = -np.take_along_axis(log_probs, labels[..., None], axis=-1)[..., 0]
    expected = [(cross_entropy[0, 0] + cross_entropy[0, 1]) / 2, cross_entropy[1, 0], 0.0]
    np.testing.assert_allclose(losses.numpy(), expected, rtol=1e-5)
    correct = logits.argmax(-1) == labels
    np.testing.assert_allclose(metrics["masked_lm_accuracy"].numpy(),
                               [(correct[0, 0] + correct[0, 1]) / 2, correct[1, 0], 0.0])
    assert losses.shape == (3,) and losses.dtype == tf.float32
    assert 0 < expected[0] and np.isclose(expected[0], np.log(CONFIG.vocab_size), rtol=0.5)


@pytest.mark.parametrize("hidden_act, activation", [
    ("gelu", gelu), ("gelu_approximate", activations.gelu)])
def test_head_uses_the_encoders_gelu_and_initializer(hidden_act, activation):
    model = _model(CONFIG.replace(hidden_act=hidden_act, initializer_range=0.05))
    dense = model.masked_lm.dense
    assert dense.activation is activation
    assert dense.kernel_initializer.stddev == 0.05


def test_output_matrix_is_the_word_embedding_table():
    model = _model()
    table = model.encoder.bert.get_embedding_table()
    assert model.masked_lm.embedding_table is table
    trainable = model.trainable_variables
    assert len({id(v) for v in trainable}) == len(trainable)
    assert len(trainable) == len(model.encoder.trainable_variables) + len(masked_lm_variables(model.masked_lm))
    batch = {"input_word_ids": np.array([[2, 4, 3]], np.int32),
             "input_mask": np.ones([1, 3], np.int32),
             "masked_lm_positions": np.array([[1]], np.int32),
             "masked_lm_ids": np.array([[20]], np.int32),
             "masked_lm_weights": np.ones([1, 1], np.float32)}
    with tf.GradientTape() as tape:
        losses, _ = model.per_example_loss(batch, training=True)
    gradient = tape.gradient(losses, table)
    # The embedding table gets gradient through the output projection at every vocabulary row,
    # not only the rows of the input tokens.
    assert np.count_nonzero(np.abs(tf.convert_to_tensor(gradient).numpy()).sum(1)) == table.shape[0]


@pytest.fixture(scope="module")
def mlm_build(tmp_path_factory):
    root = tmp_path_factory.mktemp("mlm_method")
    write_dialogues(corpus(n=30, seed=2), str(root / "train.jsonl"))
    build(str(root / "train.jsonl"), str(root / "mlm"), make_builder("mlm"), TOKENIZER,
          BuildOptions(max_length=16, num_shards=2, merge_consecutive_turns=False, min_turns=1))
    return str(root / "mlm")


def test_trains_under_two_replicas(mlm_build, tmp_path, two_replicas):
    specials = (TOKENIZER.pad_id, TOKENIZER.cls_id, TOKENIZER.sep_id, TOKENIZER.mask_id)

    def dataset_fn(context):
        batches = make_dataset(mlm_build, 8, training=True, input_context=context, seed=5,
                               repeat=True)
        return add_masks(batches, seed=5, vocab_size=TOKENIZER.vocab_size,
                         mask_id=TOKENIZER.mask_id, special_ids=specials)

    config = LoopConfig(model_dir=str(tmp_path / "m"), max_steps=4,
                        optimizer=OptimizerConfig(learning_rate=1e-3), checkpoint_every=2,
                        log_every=1)
    loop = TrainingLoop(two_replicas, _model,
                        dataset_fn, TOKENIZER, config)
    before = {name: v.numpy() for name, v in masked_lm_variables(loop.method.masked_lm).items()}
    scalars = loop.run()
    assert scalars["step"] == 4 and np.isfinite(scalars["loss"])
    assert 0 <= scalars["masked_lm_accuracy"] <= 1
    for name, variable in masked_lm_variables(loop.method.masked_lm).items():
        assert not np.array_equal(variable.numpy(), before[name]), name
