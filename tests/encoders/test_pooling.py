import numpy as np
import pytest
import tensorflow as tf

from tfdialemb.encoders import masked_mean, pool


def test_masked_mean_hand_worked():
    sequence = np.array([[[1.0, 2.0], [3.0, 4.0], [100.0, 100.0]],
                         [[5.0, -1.0], [7.0, 1.0], [9.0, 3.0]]], np.float32)
    mask = np.array([[1, 1, 0], [1, 1, 1]], np.int32)
    # Row 0 averages the first two tokens, row 1 all three.
    expected = np.array([[2.0, 3.0], [7.0, 1.0]], np.float32)
    np.testing.assert_allclose(masked_mean(sequence, mask).numpy(), expected)
    np.testing.assert_allclose(pool(sequence, mask, "cls").numpy(), [[1.0, 2.0], [5.0, -1.0]])


def test_all_padding_row_gives_zeros_not_nan():
    sequence = tf.ones([1, 3, 4])
    assert np.all(masked_mean(sequence, tf.zeros([1, 3], tf.int32)).numpy() == 0)


def test_unknown_pooling_is_rejected():
    with pytest.raises(ValueError, match="unknown pooling 'max'"):
        pool(tf.ones([1, 2, 3]), tf.ones([1, 2]), "max")
