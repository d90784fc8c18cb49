"""The values the input pipelines take as options, importable without TensorFlow: the methods'
options offer them as the commands' flag choices and defaults before any model is touched."""

VIEWS = ("augmented", "dropout")
"""Contrastive pairs: what a positive is, an augmentation or the dialogue again (dropout)."""
PAIRS = ("orig_aug", "aug_aug")
"""Contrastive pairs: precomputed positives as (dialogue, view) or (view, view)."""
WORD_UNITS = ("wordpiece", "jieba")
"""Response augmentation: what a word is, a piece and its `##` pieces, or a jieba word (Chinese; see
the `fgc` builder)."""
MASK_PROB = 0.15
"""Masked language modelling: fraction of tokens predicted (BERT, DialogueCSE)."""
MAX_PREDICTIONS = 10
"""Masked language modelling: predictions per sequence at most."""
