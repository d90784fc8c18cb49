"""The evaluation tasks by name: function(eval_file, embed) → {metric name: value}.

Shared by `python -m tfdialemb.evaluate` and the training loop's validation hook.
"""
from tfdialemb.eval.dialogue_sts import evaluate_dialogue_sts
from tfdialemb.eval.semantic_retrieval import evaluate_semantic_retrieval

TASKS = {"sr": evaluate_semantic_retrieval, "dsts": evaluate_dialogue_sts}
