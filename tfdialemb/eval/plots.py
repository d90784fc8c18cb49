"""PNG figures of dialogue embeddings: 2-D projections by label, and dial2vec's Fig. 3.

Figures are drawn on matplotlib `Figure` objects with the Agg canvas, never through pyplot, so no
global backend is switched and nothing needs a display; files are written atomically.
"""
from typing import Hashable, Mapping, Optional, Sequence

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from sklearn.decomposition import PCA
from sklearn.manifold import TSNE

from tfdialemb.eval.dialogue_metrics import label_codes
from tfdialemb.files import atomic_open

PROJECTIONS = ("pca", "tsne")
TSNE_PERPLEXITY = 30.0


def projection_2d(embeddings: np.ndarray, method: str = "pca", seed: int = 0) -> np.ndarray:
    """[N, 2] coordinates: the top two principal components, or a seeded t-SNE.

    t-SNE's perplexity is 30 (sklearn's default) capped at N - 1, as it must be below N.
    """
    if method not in PROJECTIONS:
        raise ValueError(f"method must be one of {PROJECTIONS}, got {method!r}")
    x = np.asarray(embeddings, np.float64)
    if x.ndim != 2 or len(x) < 3 or x.shape[1] < 2:
        raise ValueError(
            f"a 2-D projection needs embeddings [N ≥ 3, H ≥ 2], got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError("embeddings hold NaN or infinite values")
    if method == "pca":
        return PCA(n_components=2, random_state=seed).fit_transform(x)
    perplexity = min(TSNE_PERPLEXITY, len(x) - 1.0)
    return TSNE(n_components=2, perplexity=perplexity, init="pca",
                random_state=seed).fit_transform(x)


def _save_png(figure: Figure, path: str) -> None:
    FigureCanvasAgg(figure)
    with atomic_open(path, "wb") as f:
        figure.savefig(f, format="png", bbox_inches="tight")


def plot_projection(embeddings: np.ndarray, labels: Sequence[Hashable], path: str,
                    title: str = "", method: str = "pca", seed: int = 0) -> None:
    """Scatter of the 2-D projection, one colour per label, written as a PNG to `path`."""
    codes = label_codes(labels)
    if len(codes) != len(embeddings):
        raise ValueError(f"{len(embeddings)} embeddings but {len(codes)} labels")
    points = projection_2d(embeddings, method, seed)
    names = list(dict.fromkeys(labels))
    figure = Figure(figsize=(6, 5))
    axes = figure.add_subplot()
    for code, name in enumerate(names):
        mine = codes == code
        axes.scatter(points[mine, 0], points[mine, 1], s=8, label=str(name))
    axes.set_title(title or f"{method.upper()} projection")
    if len(names) <= 20:
        axes.legend(fontsize="small", markerscale=2)
    _save_png(figure, path)


def _checked_points(points: Sequence[Mapping], keys: Sequence[str], what: str) -> None:
    for index, point in enumerate(points):
        missing = [key for key in keys if not isinstance(point, Mapping) or key not in point]
        if missing:
            raise ValueError(f"{what} {index} lacks {missing}; expected keys {list(keys)}")


def plot_alignment_uniformity(points: Sequence[Mapping], path: str,
                              labelled_points: Optional[Sequence[Mapping]] = None,
                              alignment_key: str = "adjusted_alignment", title: str = "") -> None:
    """dial2vec's Fig. 3: uniformity against (adjusted) alignment along training, as a PNG.

    `points` are {"step", alignment_key, "uniformity"} in training order, drawn as a path coloured
    by step with its start marked; `labelled_points` are optional {"label", alignment_key,
    "uniformity"} final points (e.g. baselines). Lower is better on both axes.
    """
    if not points:
        raise ValueError("plot_alignment_uniformity needs at least one training point")
    _checked_points(points, ("step", alignment_key, "uniformity"), "point")
    labelled_points = labelled_points or []
    _checked_points(labelled_points, ("label", alignment_key, "uniformity"), "labelled point")
    x = np.array([point[alignment_key] for point in points], np.float64)
    y = np.array([point["uniformity"] for point in points], np.float64)
    steps = np.array([point["step"] for point in points], np.float64)
    figure = Figure(figsize=(6, 5))
    axes = figure.add_subplot()
    axes.plot(x, y, color="lightgray", zorder=1)
    path_points = axes.scatter(x, y, c=steps, cmap="viridis", zorder=2)
    figure.colorbar(path_points, ax=axes, label="step")
    axes.annotate("start", (x[0], y[0]), textcoords="offset points", xytext=(5, 5))
    for point in labelled_points:
        axes.scatter([point[alignment_key]], [point["uniformity"]], marker="x", color="black")
        axes.annotate(str(point["label"]), (point[alignment_key], point["uniformity"]),
                      textcoords="offset points", xytext=(5, -10))
    axes.margins(0.15)
    axes.set_xlabel(alignment_key.replace("_", " "))
    axes.set_ylabel("uniformity")
    axes.set_title(title or "alignment and uniformity (lower is better)")
    _save_png(figure, path)
