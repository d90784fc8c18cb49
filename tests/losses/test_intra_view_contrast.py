"""IVC (FGC Eq. 2-3) against a loop-by-loop numpy re-derivation of the equations."""
import numpy as np

from tfdialemb.losses.intra_view_contrast import intra_view_contrast


def _cos(a, b):
    return a @ b / (np.linalg.norm(a) * np.linalg.norm(b))


def _l(views, anchor, partner, tau):
    """Eq. 2: -log exp(sim(z, z̄)/τ) / Σ_{z_k ≠ z} exp(sim(z, z_k)/τ) over the context's views."""
    numerator = np.exp(_cos(views[anchor], views[partner]) / tau)
    denominator = sum(np.exp(_cos(views[anchor], views[k]) / tau) for k in range(4) if k != anchor)
    return -np.log(numerator / denominator)


def test_each_context_is_l_of_the_positive_plus_l_of_the_negative():
    rng = np.random.default_rng(0)
    views = rng.normal(size=(3, 4, 5)).astype(np.float32)
    expected = [_l(v, 0, 1, 0.5) + _l(v, 2, 3, 0.5) for v in views.astype(np.float64)]
    np.testing.assert_allclose(intra_view_contrast(views, 0.5).numpy(), expected, rtol=1e-5)


def test_views_of_other_contexts_are_not_negatives():
    rng = np.random.default_rng(1)
    views = rng.normal(size=(2, 4, 5)).astype(np.float32)
    alone = intra_view_contrast(views[:1], 0.5).numpy()
    changed = views.copy()
    changed[1] = rng.normal(size=(4, 5))
    np.testing.assert_allclose(intra_view_contrast(changed, 0.5).numpy()[:1], alone, rtol=1e-6)


def test_identical_augmentations_far_from_the_other_class_approach_zero():
    views = np.array([[[1, 0], [1, 0], [-1, 0], [-1, 0]]], np.float32)
    # cos(z+, z̄+) = 1 and cos(z+, z−) = cos(z+, z̄−) = -1, so each anchor's l = log(1 + 2 e^{-2/τ}).
    expected = 2 * np.log(1 + 2 * np.exp(-2 / 0.5))
    np.testing.assert_allclose(intra_view_contrast(views, 0.5).numpy(), [expected], rtol=1e-5)


def test_every_view_anchors_when_asked():
    """NT-Xent's reading: l(z+, z̄+) + l(z̄+, z+) + l(z−, z̄−) + l(z̄−, z−), each anchor's softmax over the
    other three views of its context."""
    rng = np.random.default_rng(2)
    views = rng.normal(size=(3, 4, 5)).astype(np.float32)
    expected = [_l(v, 0, 1, 0.5) + _l(v, 1, 0, 0.5) + _l(v, 2, 3, 0.5) + _l(v, 3, 2, 0.5)
                for v in views.astype(np.float64)]
    np.testing.assert_allclose(intra_view_contrast(views, 0.5, anchors="all").numpy(), expected, rtol=1e-5)
