"""The sorting transformer sees no positions: permuting a dialogue's utterances permutes their
scores, and padding rows change nothing."""
import math

import numpy as np
import tensorflow as tf

import tiny_bert
from tfdialemb.encoders import Encoder, EncoderConfig
from tfdialemb.methods.models.utterance_sorting import UtteranceSortingModel


def test_scores_are_permutation_equivariant_and_ignore_padding():
    tf.keras.utils.set_random_seed(3)
    encoder = Encoder(EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG)).build_variables()
    model = UtteranceSortingModel(encoder)
    assert model.projector.width == 16  # half the tiny encoder's 32
    rng = np.random.default_rng(0)
    ids = np.zeros([1, 5, 6], np.int32)
    for row, length in enumerate((3, 6, 4, 5)):  # four utterances, one padding row
        ids[0, row, :length] = rng.integers(5, 60, size=length)
    mask = (ids > 0).astype(np.int32)
    scores = model.scores(ids, mask, training=False).numpy()[0]
    order = [2, 0, 3, 1, 4]
    permuted = model.scores(ids[:, order], mask[:, order], training=False).numpy()[0]
    np.testing.assert_allclose(permuted[:4], scores[order][:4], rtol=1e-4, atol=1e-5)
    unpadded = model.scores(ids[:, :4], mask[:, :4], training=False).numpy()[0]
    np.testing.assert_allclose(unpadded, scores[:4], rtol=1e-4, atol=1e-5)


def test_ranker_head_is_x_plus_exact_gelu_then_a_linear_score():
    """The released ranker: x + GELU(W x + b) with PyTorch's exact GELU, then w·x without bias,
    re-derived in numpy (Φ through math.erf)."""
    tf.keras.utils.set_random_seed(4)
    encoder = Encoder(EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG)).build_variables()
    model = UtteranceSortingModel(encoder, layers=1)
    states = np.random.default_rng(1).normal(scale=3.0, size=[1, 3, 16]).astype(np.float32)
    block = model.blocks[0]
    after_blocks = block([states, np.ones([1, 3, 3], np.int32)], training=False).numpy()
    kernel, bias = (w.numpy() for w in model.ranker_hidden.weights)
    pre = after_blocks @ kernel + bias
    phi = 0.5 * (1 + np.vectorize(math.erf)(pre / math.sqrt(2)))
    expected = (after_blocks + pre * phi) @ model.ranker.weights[0].numpy()
    got = model._rank_scores(tf.constant(states), tf.ones([1, 3, 3], tf.int32), training=False)
    np.testing.assert_allclose(got.numpy(), expected[..., 0], rtol=1e-5, atol=1e-5)
