"""2-D projections against numpy's SVD, and the PNG files the plots write."""
import os

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from tfdialemb.eval.plots import (label_styles, plot_alignment_uniformity, plot_projection, projection_2d,
                                  projection_figure)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _embeddings(n=12, dim=5):
    return np.random.default_rng(0).normal(size=[n, dim]) * [5.0, 3.0, 1.0, 0.5, 0.1]


def _assert_png(path):
    with open(path, "rb") as f:
        assert f.read(8) == PNG_SIGNATURE
    assert not [name for name in os.listdir(os.path.dirname(path)) if name.startswith(".tmp-")]


def test_pca_projection_is_the_top_two_singular_directions():
    x = _embeddings()
    centred = x - x.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    expected = centred @ vt[:2].T
    projected = projection_2d(x, "pca")
    signs = np.sign(np.sum(projected * expected, axis=0))
    np.testing.assert_allclose(projected * signs, expected, atol=1e-9)


def test_tsne_projection_is_seeded():
    x = _embeddings(n=8)
    first = projection_2d(x, "tsne", seed=3)
    assert first.shape == (8, 2)
    np.testing.assert_array_equal(first, projection_2d(x, "tsne", seed=3))


@pytest.mark.parametrize("method", ["pca", "tsne"])
def test_plot_projection_writes_a_png(tmp_path, method):
    path = str(tmp_path / "plots" / f"{method}.png")
    plot_projection(_embeddings(), ["hotel", "taxi", "train"] * 4, path, "test set", method)
    _assert_png(path)


def test_plot_alignment_uniformity_writes_a_png(tmp_path):
    path = str(tmp_path / "fig3.png")
    trajectory = [{"step": s, "adjusted_alignment": -0.1 * s, "uniformity": -1.0 - 0.2 * s}
                  for s in range(5)]
    baselines = [{"label": "BERT", "adjusted_alignment": 0.1, "uniformity": -0.5}]
    plot_alignment_uniformity(trajectory, path, labelled_points=baselines)
    _assert_png(path)


@pytest.mark.parametrize("call, message", [
    (lambda p: projection_2d(np.ones([5, 3]), "umap"), "method must be one of"),
    (lambda p: projection_2d(np.ones([2, 3])), r"N ≥ 3, H ≥ 2"),
    (lambda p: plot_projection(np.ones([4, 3]), ["a", "b"], p), "4 embeddings but 2 labels"),
    (lambda p: plot_alignment_uniformity([], p), "at least one training point"),
    (lambda p: plot_alignment_uniformity([{"step": 0, "uniformity": -1.0}], p),
     r"point 0 lacks \['adjusted_alignment'\]"),
    (lambda p: plot_alignment_uniformity(
        [{"step": 0, "alignment": 0.5, "uniformity": -1.0}], p, alignment_key="alignment",
        labelled_points=[{"alignment": 0.1, "uniformity": -2.0}]),
     r"labelled point 0 lacks \['label'\]"),
])
def test_bad_input_is_refused(tmp_path, call, message):
    path = str(tmp_path / "never.png")
    with pytest.raises(ValueError, match=message):
        call(path)
    assert not os.path.exists(path)


def test_forty_labels_keep_distinct_styles_and_the_legend_stays_off_the_points(tmp_path):
    styles = label_styles(40)
    assert len(set(styles)) == 40
    labels = [f"category {i}" for i in range(40)] * 2
    figure = projection_figure(_embeddings(n=80), labels, "forty")
    FigureCanvasAgg(figure).draw()
    axes = figure.axes[0]
    legend = axes.get_legend()
    assert len(legend.get_texts()) == 40
    renderer = figure.canvas.get_renderer()
    assert legend.get_window_extent(renderer).x0 >= axes.get_window_extent(renderer).x1  # right of the axes
    plot_projection(_embeddings(n=80), labels, str(tmp_path / "forty.png"))
    _assert_png(str(tmp_path / "forty.png"))
