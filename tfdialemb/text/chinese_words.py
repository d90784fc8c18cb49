"""Chinese word segmentation with jieba, an optional dependency (`pip install 'tfdialemb[chinese]'`):
BERT's Chinese vocabularies split text into characters, and an operation that works on words
(FGC's response augmentation, token replacement) needs the words.
"""
import logging
import re
from typing import Callable, List, Tuple

CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef]+")
"""A run of CJK ideographs (the Unified Ideographs blocks and their extensions and compatibility
block): text with no spaces between its words."""


def load_jieba(needed_by: str):
    """The jieba module, its log quiet; a ValueError that names `needed_by` and how to install it
    when jieba is missing."""
    try:
        import jieba  # pylint: disable=import-outside-toplevel
    except ImportError:
        raise ValueError(f"{needed_by} needs the jieba package to segment Chinese words: pip install jieba, "
                         "or pip install 'tfdialemb[chinese]'") from None
    jieba.setLogLevel(logging.WARNING)
    return jieba


def jieba_spans(needed_by: str) -> Callable[[str], List[Tuple[int, int]]]:
    """A function giving the (start, end) character span of each jieba word of a text."""
    tokenize = load_jieba(needed_by).tokenize
    return lambda text: [(start, end) for _, start, end in tokenize(text)]
