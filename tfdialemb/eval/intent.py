"""Intent prediction from single utterances (thesis Sec. 4.4, Table 3 last column: banking77).

"Given an utterance, classify its intent; the metric is accuracy." The released code has no
banking77 evaluation (REFERENCE_CODE_NOTES.md §6.4), so it follows the thesis' frozen-embedding
protocol with the released classifier of the domain probe: `LogisticRegression(random_state=0)` on
L2-normalised sentence embeddings, fitted on banking77's train.csv and scored on its test.csv
(the published split; `--format=banking77` converts each file), or on a seeded held-out fraction
of one file. Each record is a one-turn canonical dialogue whose `labels[label_key]` is the intent;
records without it are left out and counted, a record of several turns is refused.
"""
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from tfdialemb.eval import classifier_probes
from tfdialemb.eval.dialogue_embedding import read_labelled_dialogues
from tfdialemb.eval.inputs import embed_distinct
from tfdialemb.eval.probe_split import DEFAULT_TEST_FRACTION, probe_parts, split_codes

DEFAULT_LABEL_KEY = "intent"


def read_utterances(path: str, label_key: str) -> Tuple[List[str], List[Any], int]:
    """(texts, labels, records without the label) of a file of one-turn labelled dialogues."""
    data = read_labelled_dialogues(path, label_key)
    for dialogue in data.dialogues:
        if len(dialogue.turns) != 1:
            raise ValueError(f"{path}: dialogue {dialogue.id!r} has {len(dialogue.turns)} turns; intent "
                             "prediction reads one-utterance records (e.g. `python -m tfdialemb.data convert "
                             "--format=banking77`)")
    return [d.turns[0].text for d in data.dialogues], list(data.labels), data.skipped_unlabelled


def evaluate_intent(eval_path: str, embed: Callable[[Sequence[str]], np.ndarray], label_key: str = DEFAULT_LABEL_KEY,
                    fit_path: Optional[str] = None, test_fraction: float = DEFAULT_TEST_FRACTION,
                    seed: int = 0) -> Dict[str, Any]:
    """{"split", "metrics": accuracy and macro F1 of the held-out utterances' intents}; every
    distinct text is embedded once."""
    texts, labels, skipped = read_utterances(eval_path, label_key)
    fit_texts, fit_labels, fit_skipped = read_utterances(fit_path, label_key) if fit_path else ([], [], 0)
    vectors = embed_distinct(embed, texts + fit_texts)
    parts = probe_parts(np.stack([vectors[t] for t in texts]), labels,
                        np.stack([vectors[t] for t in fit_texts]) if fit_path else None,
                        fit_labels if fit_path else None, test_fraction, seed,
                        {"fit_file": fit_path, "skipped_unlabelled_fit": fit_skipped} if fit_path else None)
    fit_codes, test_codes = split_codes(parts.fit_labels, parts.test_labels)
    scores = classifier_probes.logistic_regression(parts.fit_x, fit_codes, parts.test_x, test_codes)
    return {"split": parts.split,
            "metrics": {"accuracy": scores["accuracy"], "macro_f1": scores["macro_f1"],
                        "logreg_converged": scores["converged"], "fit_utterances": len(fit_codes),
                        "test_utterances": len(test_codes),
                        "intents": int(max(fit_codes.max(), test_codes.max())) + 1,
                        "skipped_unlabelled": skipped}}
