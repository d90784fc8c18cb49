"""The sorting transformer sees no positions: permuting a dialogue's utterances permutes their
scores, and padding rows change nothing."""
import numpy as np
import tensorflow as tf

import tiny_bert
from tfdialemb.encoders import Encoder, EncoderConfig
from tfdialemb.methods.utterance_sorting import UtteranceSortingModel


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
