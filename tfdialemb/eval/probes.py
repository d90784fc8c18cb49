"""The thesis' probes of frozen dialogue embeddings (Sec. 4.4, Table 3): domain classification,
dialogue categorization (clustering purity) and dialogue retrieval (nDCG@100).

As the released benchmark computes them (voorhs/dialogue-augmentation
mylib/embedding_benchmarks/evaluate_all.py and the modules it calls), on L2-normalised
embeddings of a fitted part (the corpus' train split) and a held-out part (its test split):

- classification: logistic regression fitted on the fitted part, accuracy and macro F1 on the
  held-out part (`classifier_probes.logistic_regression`);
- categorization: `KMeans(n_classes, random_state=0, n_init=10)` fitted on the fitted part and
  applied to the held-out part (clusterization.py), purity (Σ over clusters of the majority
  class count / N, `dialogue_metrics.purity`) and V-measure (β = 1; the released
  `v_measure_score(pred, true, n_classes)`, clusterization.py:44, passes the number of classes
  where torchmetrics takes β, weighting completeness n_classes times homogeneity — not copied);
  `purity_fit` is the fitted part's own (released `cluster_purity_train`);
- retrieval: each held-out dialogue queries the fitted ones by cosine, same label relevant,
  nDCG@k (`ndcg.retrieval_ndcg`).

The parts are two files (the released fixed splits: SGD train and test) or one file split by a
seed (`probe_split.held_out_split`). Labels are one value per dialogue (e.g. the single-domain
SGD of `--format=sgd_single_domain`); dialogues without the label are left out and counted.
"""
from typing import Any, Callable, Dict, Hashable, Optional, Sequence

import numpy as np

from tfdialemb.dialogue import Dialogue
from tfdialemb.eval import classifier_probes
from tfdialemb.eval.dialogue_embedding import read_labelled_dialogues
from tfdialemb.eval.dialogue_metrics import purity, unit_rows
from tfdialemb.eval.ndcg import THESIS_K, retrieval_ndcg
from tfdialemb.eval.evaluator import register_evaluator
from tfdialemb.eval.probe_split import DEFAULT_TEST_FRACTION, probe_parts, split_codes
from tfdialemb.eval.probe_task import ProbeTaskEvaluator
from tfdialemb.eval.task_options import FIT_FILE, LABEL_KEY, PROBE_VIEW, check_probe_split, probe_view
from tfdialemb.core.options import Option

EmbedDialogues = Callable[[Sequence[Dialogue]], np.ndarray]
"""Dialogues in, one embedding row per dialogue out, in input order."""


def domain_probes(fit_x: np.ndarray, fit_labels: Sequence[Hashable], test_x: np.ndarray,
                  test_labels: Sequence[Hashable], k: int = THESIS_K) -> Dict[str, Any]:
    """Classification, categorization and retrieval of the held-out rows given the fitted ones."""
    from sklearn.cluster import KMeans  # pylint: disable=import-outside-toplevel
    from sklearn.metrics import v_measure_score  # pylint: disable=import-outside-toplevel

    fit_x, test_x = unit_rows(np.asarray(fit_x, np.float64)), unit_rows(np.asarray(test_x, np.float64))
    if len(fit_labels) != len(fit_x) or len(test_labels) != len(test_x):
        raise ValueError(f"{len(fit_x)} + {len(test_x)} embeddings but {len(fit_labels)} + {len(test_labels)} labels")
    fit_codes, test_codes = split_codes(fit_labels, test_labels)
    classes = int(max(fit_codes.max(), test_codes.max())) + 1
    if len(fit_x) < classes:
        raise ValueError(f"{len(fit_x)} fitted dialogues cannot form {classes} clusters")
    classification = classifier_probes.logistic_regression(fit_x, fit_codes, test_x, test_codes)
    kmeans = KMeans(n_clusters=classes, random_state=0, n_init=10).fit(fit_x)
    clusters = kmeans.predict(test_x)
    return {
        "accuracy": classification["accuracy"], "macro_f1": classification["macro_f1"],
        "logreg_converged": classification["converged"],
        "purity": purity(test_codes, clusters), "v_measure": float(v_measure_score(test_codes, clusters)),
        "purity_fit": purity(fit_codes, kmeans.labels_),
        **retrieval_ndcg(test_x, test_codes, fit_x, fit_codes, k=k),
        "labels": classes, "labels_unseen_in_fit": int(len(set(test_codes) - set(fit_codes))),
    }


def evaluate_probes(eval_path: str, label_key: str, embed: EmbedDialogues, fit_path: Optional[str] = None,
                    test_fraction: float = DEFAULT_TEST_FRACTION, seed: int = 0,
                    k: int = THESIS_K) -> Dict[str, Any]:
    """The probes of `eval_path`'s labelled dialogues: held out against `fit_path`'s, or, without
    it, a seeded held-out fraction against the rest: {"split": how, "metrics": ...}. Both files
    are read before `embed` is called, on the evaluated file's dialogues first, then on the
    fitted file's."""
    evaluated = read_labelled_dialogues(eval_path, label_key)
    fitted = read_labelled_dialogues(fit_path, label_key) if fit_path else None
    parts = probe_parts(np.asarray(embed(evaluated.dialogues)), evaluated.labels, np.asarray(embed(fitted.dialogues)) if fitted else None,
                        fitted.labels if fitted else None, test_fraction, seed,
                        {"fit_file": fit_path, "skipped_unlabelled_fit": fitted.skipped_unlabelled} if fitted else None)
    return {"split": parts.split,
            "metrics": {"fit_dialogues": len(parts.fit_x), "test_dialogues": len(parts.test_x),
                        "skipped_unlabelled": evaluated.skipped_unlabelled,
                        **domain_probes(parts.fit_x, parts.fit_labels, parts.test_x, parts.test_labels, k=k)}}


@register_evaluator
class DomainProbesEvaluator(ProbeTaskEvaluator):
    """`probes`: the domain probes of the dialogue embedding's --probe_view (the whole dialogue as
    one sequence), fitted on --fit_file or on the rest of a seeded split of the eval file."""

    name = "probes"
    kind = "dialogue"
    options = ProbeTaskEvaluator.options + (
        LABEL_KEY, FIT_FILE, PROBE_VIEW,
        Option("ndcg_k", THESIS_K, "The retrieval cut-off of nDCG@k (thesis: 100).", lower_bound=1))
    setting_hints = {"pooling": ": pick the dialogue's pooling with --probe_view"}
    primary_metric = "accuracy"
    headline = (("accuracy", "accuracy"), ("macro_f1", "macro F1"), ("purity", "purity"), ("v_measure", "V-measure"))

    def columns(self, metrics):
        """The headline, then nDCG at the --ndcg_k scored."""
        return list(self.headline) + [(key, key.replace("ndcg", "nDCG")) for key in metrics if key.startswith("ndcg@")]

    def check(self, options):
        if not options.label_key:
            raise ValueError(f"--task={self.name} needs --label_key (the key of `labels` naming the domain)")
        check_probe_split(options)

    def probe(self, source, eval_file, options):
        embed_views = source.dialogue_views()
        view = probe_view(options, source.settings)
        source.embedding.update(view=view)
        evaluated = []

        def embed(dialogues):
            vectors = embed_views(dialogues)[view]
            evaluated.append((vectors, [d.labels[options.label_key] for d in dialogues]))
            return vectors

        result = evaluate_probes(eval_file, options.label_key, embed, fit_path=options.fit_file, k=options.ndcg_k,
                                 test_fraction=options.probe_test_fraction, seed=options.probe_seed)
        return {"label_key": options.label_key, "embedding": source.embedding, **result}, evaluated[0]

    def validation(self, eval_file, settings, options):
        labels = read_labelled_dialogues(eval_file, options.label_key).labels
        probe_parts(np.zeros([len(labels), 1]), labels, seed=options.seed)  # a split it cannot score fails now
        pooling = settings["dialogue_pooling"]
        return lambda runtime: evaluate_probes(eval_file, options.label_key,
                                               lambda dialogues: runtime.embed(dialogues)[pooling],
                                               seed=options.seed)["metrics"]
