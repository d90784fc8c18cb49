"""The evaluator of a DialogueCSE task scored on sentence embeddings (`sr`, `dsts`): the encoder's,
a fitted transform of it (whitening, flow), average GloVe, or an exported sentence SavedModel."""
from typing import Any, Callable, Dict

from tfdialemb.eval.evaluator import SENTENCES, Evaluator


class SentenceTaskEvaluator(Evaluator):
    """`score(eval_file, embed)` → metrics and `read(eval_file)`, the set's reader (validation reads
    it before training, so a set that cannot be scored is refused at once), as staticmethods."""

    kind = "sentence"
    inputs = (SENTENCES,)
    serves_exported = True
    score: Callable[..., Dict[str, float]]
    read: Callable[[str], Any]

    def __call__(self, source, eval_file, options):
        metrics = self.score(eval_file, source.sentences())
        return {"pooling": source.settings.get("pooling"), "embedding": source.embedding, "metrics": metrics}

    def validation(self, eval_file, settings, options):
        self.read(eval_file)
        return lambda runtime: self.score(eval_file, runtime.embed)
