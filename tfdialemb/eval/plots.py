"""PNG figures of dialogue embeddings: 2-D projections by label, and dial2vec's Fig. 3.

Figures are drawn on matplotlib `Figure` objects with the Agg canvas, never through pyplot, so no
global backend is switched and nothing needs a display; files are written atomically.
"""
from typing import Hashable, List, Mapping, Optional, Sequence, Tuple

import numpy as np
from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from sklearn.decomposition import PCA
from sklearn.manifold import TSNE

from tfdialemb.eval.dialogue_metrics import label_codes
from tfdialemb.core.files import atomic_open

PROJECTIONS = ("pca", "tsne")
TSNE_PERPLEXITY = 30.0
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
"""With tab20's 20 colours, 160 distinct (colour, marker) styles: every label of a corpus such as
chatterbot's 21 categories or banking77's 77 intents keeps its own."""
LEGEND_ROWS = 25
"""Legend entries per column; the legend sits right of the axes, never over the points."""


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


def label_styles(count: int) -> List[Tuple[Tuple[float, ...], str]]:
    """(colour, marker) for `count` labels: the 20 colours of tab20 with the first marker, then
    with the next, ...; distinct for up to 160 labels, then repeating."""
    colours = colormaps["tab20"].colors
    return [(colours[i % len(colours)], MARKERS[(i // len(colours)) % len(MARKERS)]) for i in range(count)]


def projection_figure(embeddings: np.ndarray, labels: Sequence[Hashable], title: str = "", method: str = "pca",
                      seed: int = 0) -> Figure:
    """Scatter of the 2-D projection, a colour and marker per label (`label_styles`), the legend
    outside the axes on the right."""
    codes = label_codes(labels)
    if len(codes) != len(embeddings):
        raise ValueError(f"{len(embeddings)} embeddings but {len(codes)} labels")
    points = projection_2d(embeddings, method, seed)
    names = list(dict.fromkeys(labels))
    figure = Figure(figsize=(6, 5))
    axes = figure.add_subplot()
    for code, (name, (colour, marker)) in enumerate(zip(names, label_styles(len(names)))):
        mine = codes == code
        axes.scatter(points[mine, 0], points[mine, 1], s=10, color=colour, marker=marker, label=str(name))
    axes.set_title(title or f"{method.upper()} projection")
    axes.legend(fontsize="small", markerscale=1.5, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
                ncol=-(-len(names) // LEGEND_ROWS))
    return figure


def plot_projection(embeddings: np.ndarray, labels: Sequence[Hashable], path: str,
                    title: str = "", method: str = "pca", seed: int = 0) -> None:
    """`projection_figure` written as a PNG to `path` (widened to hold the legend)."""
    _save_png(projection_figure(embeddings, labels, title, method, seed), path)


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
