"""The evaluator shape of the augmentation thesis' probes of frozen embeddings (`probes`, `intent`,
`invariance`): each probe's report, plus the PCA projection of the evaluated L2-normalised
embeddings coloured by label under --plot_dir (thesis Figs. 1-2; released scatter-analysis.py
`get_pca_df` normalises too)."""
import os
from typing import Any, Dict, Sequence, Tuple

import numpy as np

from tfdialemb.eval.dialogue_metrics import unit_rows
from tfdialemb.eval.evaluator import Evaluator
from tfdialemb.eval.task_options import PLOT_DIR, PROBE_SPLIT


class ProbeTaskEvaluator(Evaluator):
    """Subclasses give `probe(source, eval_file, options)` → (report, (embeddings, labels))."""

    options = (PLOT_DIR,) + PROBE_SPLIT

    def probe(self, source, eval_file: str, options) -> Tuple[Dict[str, Any], Tuple[np.ndarray, Sequence]]:
        raise TypeError(f"{type(self).__name__} must define probe()")

    def __call__(self, source, eval_file, options):
        from tfdialemb.eval import plots  # pylint: disable=import-outside-toplevel  (matplotlib)

        report, (vectors, labels) = self.probe(source, eval_file, options)
        if options.plot_dir:
            path = os.path.join(options.plot_dir, f"projection-{self.name}.png")
            embedding = source.embedding
            view = embedding.get("view") or f"{embedding['pooling']}-pooled sentence"
            plots.plot_projection(unit_rows(vectors), labels, path, title=f"{self.name}: PCA of the {view} embeddings")
            report["plots"] = [path]
        return report
