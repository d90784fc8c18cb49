"""The evaluation tasks by name: function(eval_file, embed) → {metric name: value}.

Shared by `python -m tfdialemb.evaluate` and the training loop's validation hook, which reads each
set with its task's reader (`READERS`) before training, so a set that cannot be scored is refused
at once rather than at the first validation.
"""
from tfdialemb.eval.dialogue_sts import evaluate_dialogue_sts, read_correlated_pairs
from tfdialemb.eval.semantic_retrieval import evaluate_semantic_retrieval, read_ranked_queries

TASKS = {"sr": evaluate_semantic_retrieval, "dsts": evaluate_dialogue_sts}
READERS = {"sr": read_ranked_queries, "dsts": read_correlated_pairs}
