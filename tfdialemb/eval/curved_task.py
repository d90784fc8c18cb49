"""The evaluator shape of the triple-encoder tasks (`sequence_modeling`, `stp`): the scoring mode,
checked against a trained curved model, and how ties rank."""
from tfdialemb.eval.evaluator import Evaluator
from tfdialemb.eval.metrics import RANK_TIES
from tfdialemb.core.options import Option

CURVED_MODES = {"ccl": ("ccl",), "c3l": ("c3l", "c3l_maxsim", "bi_b2")}
"""A trained curved model's kind → the --curved_mode values that score with it."""
CURVED_MODE = Option("curved_mode", None, "How candidates are scored: Eq. 3 (c3l), MaxSim (c3l_maxsim, "
                     "Appendix B), the triple-encoder as a bi-encoder ([B2] only) or a CCL bi-encoder (default: ccl "
                     "for a CCL model, else c3l).", choices=("c3l", "c3l_maxsim", "bi_b2", "ccl"), kind=str)


class CurvedTaskEvaluator(Evaluator):
    """Subclasses score with `mode(source, options)`, a sentence encoder and the recorded speaker tokens."""

    kind = "curved"
    options = (CURVED_MODE, RANK_TIES)
    primary_metric = "avg_rank"
    greater_is_better = False
    lower_is_better = ("avg_rank*",)

    @staticmethod
    def mode(source, options) -> str:
        """--curved_mode, checked against a trained curved model; by default the model's own scoring
        (ccl for a CCL model, else c3l)."""
        curved = (source.model.recorded("curved") or {}).get("curved")
        if options.curved_mode is None:
            return "ccl" if curved == "ccl" else "c3l"
        if curved and options.curved_mode not in CURVED_MODES[curved]:
            raise ValueError(f"--curved_mode={options.curved_mode} does not score a {curved} model "
                             f"({source.model.directory}); use one of {', '.join(CURVED_MODES[curved])}")
        return options.curved_mode

    def __call__(self, source, eval_file, options):
        mode = self.mode(source, options)
        encode = source.sentences()
        settings = source.settings
        source.embedding.update(mode=mode, speaker_tokens=settings["speaker_tokens"],
                                max_length=settings["max_length"], rank_ties=options.rank_ties)
        return {"embedding": source.embedding, "metrics": self.score(source, eval_file, encode, mode, options)}

    def score(self, source, eval_file, encode, mode, options):
        """The metrics; what else it scores with is recorded in `source.embedding`."""
        raise TypeError(f"{type(self).__name__} must define score()")
