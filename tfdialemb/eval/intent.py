"""Intent prediction from single utterances (thesis Sec. 4.4, Table 3 last column: banking77),
and utterance classification by a label of their dialogue.

"Given an utterance, classify its intent; the metric is accuracy." The released code has no
banking77 evaluation (REFERENCE_CODE_NOTES.md §6.4), so it follows the thesis' frozen-embedding
protocol with the released classifier of the domain probe: `LogisticRegression(random_state=0)` on
L2-normalised sentence embeddings, fitted on banking77's train.csv and scored on its test.csv
(the published split; `--format=banking77` converts each file), or on a seeded held-out fraction
of one file. Each record is a canonical dialogue; every turn is an utterance, labelled by its
own field `label_key` when it has one, else by its dialogue's `labels[label_key]` (banking77: one
turn, the dialogue's intent; a corpus labelled per dialogue, such as chatterbot's categories: each
turn of a dialogue takes its category). Utterances without a label are left out and counted.
Held out from one file, the utterances of a dialogue of several turns stay on one side, so no
utterance is scored against its own dialogue's turns.
"""
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from tfdialemb.dialogue import read_dialogues
from tfdialemb.eval import classifier_probes
from tfdialemb.eval.dialogue_embedding import checked_label
from tfdialemb.eval.inputs import embed_distinct
from tfdialemb.eval.evaluator import register_evaluator
from tfdialemb.eval.probe_split import DEFAULT_TEST_FRACTION, probe_parts, split_codes
from tfdialemb.eval.probe_task import ProbeTaskEvaluator
from tfdialemb.eval.task_options import FIT_FILE, LABEL_KEY, check_probe_split

DEFAULT_LABEL_KEY = "intent"


def read_utterances(path: str, label_key: str) -> Tuple[List[str], List[Any], int, List[str]]:
    """(texts, labels, utterances without the label, each utterance's dialogue id) of a dialogue
    file; at least two distinct labels are needed."""
    texts, labels, skipped, dialogue_ids = [], [], 0, []
    for dialogue in read_dialogues(path):
        for turn in dialogue.turns:
            label = turn.fields.get(label_key, dialogue.labels.get(label_key))
            if label is None:
                skipped += 1
                continue
            texts.append(turn.text)
            labels.append(checked_label(path, dialogue.id, label_key, label))
            dialogue_ids.append(dialogue.id)
    if len(set(labels)) < 2:
        raise ValueError(f"{path}: {len(texts)} utterances carry label {label_key!r} (in their turn or their "
                         f"dialogue) with {len(set(labels))} distinct value(s) ({skipped} have none); need at least 2")
    return texts, labels, skipped, dialogue_ids


def evaluate_intent(eval_path: str, embed: Callable[[Sequence[str]], np.ndarray], label_key: str = DEFAULT_LABEL_KEY,
                    fit_path: Optional[str] = None, test_fraction: float = DEFAULT_TEST_FRACTION,
                    seed: int = 0) -> Dict[str, Any]:
    """{"split", "metrics": accuracy and macro F1 of the held-out utterances' intents}; every
    distinct text is embedded once."""
    texts, labels, skipped, dialogue_ids = read_utterances(eval_path, label_key)
    fit_texts, fit_labels, fit_skipped, _ = read_utterances(fit_path, label_key) if fit_path else ([], [], 0, [])
    vectors = embed_distinct(embed, texts + fit_texts)
    several_turns = len(set(dialogue_ids)) < len(dialogue_ids)
    parts = probe_parts(np.stack([vectors[t] for t in texts]), labels,
                        np.stack([vectors[t] for t in fit_texts]) if fit_path else None,
                        fit_labels if fit_path else None, test_fraction, seed,
                        {"fit_file": fit_path, "skipped_unlabelled_fit": fit_skipped} if fit_path else None,
                        groups=dialogue_ids if several_turns else None)
    fit_codes, test_codes = split_codes(parts.fit_labels, parts.test_labels)
    scores = classifier_probes.logistic_regression(parts.fit_x, fit_codes, parts.test_x, test_codes)
    return {"split": parts.split,
            "metrics": {"accuracy": scores["accuracy"], "macro_f1": scores["macro_f1"],
                        "logreg_converged": scores["converged"], "fit_utterances": len(fit_codes),
                        "test_utterances": len(test_codes),
                        "intents": int(max(fit_codes.max(), test_codes.max())) + 1,
                        "skipped_unlabelled": skipped}}


@register_evaluator
class IntentEvaluator(ProbeTaskEvaluator):
    """`intent`: utterances classified with the sentence embedding (--pooling), every turn labelled by
    its own field --label_key (default intent) or else by its dialogue's labels[--label_key]."""

    name = "intent"
    kind = "sentence"
    options = ProbeTaskEvaluator.options + (LABEL_KEY, FIT_FILE)
    primary_metric = "accuracy"
    headline = (("accuracy", "accuracy"), ("macro_f1", "macro F1"))

    def check(self, options):
        check_probe_split(options)

    def probe(self, source, eval_file, options):
        encode = source.sentences()
        label_key = options.label_key or DEFAULT_LABEL_KEY
        source.embedding.update(pooling=source.settings["pooling"], max_length=source.settings["max_length"])
        embedded = {}

        def embed_texts(texts):
            vectors = encode(texts)
            embedded.update(zip(texts, vectors))
            return vectors

        result = evaluate_intent(eval_file, embed_texts, label_key=label_key, fit_path=options.fit_file,
                                 test_fraction=options.probe_test_fraction, seed=options.probe_seed)
        texts, labels, _, _ = read_utterances(eval_file, label_key)
        return {"label_key": label_key, "embedding": source.embedding, **result}, (
            np.stack([embedded[text] for text in texts]), labels)
