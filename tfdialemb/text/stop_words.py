"""English stop-word lists: nltk's, which the augmentation thesis' released fill-mask selection
reads (shipped as resources/nltk_english_stopwords.txt, so nltk is not needed), and
scikit-learn's, which FGC's synonym replacement uses."""
from tfdialemb.core.resources import resource_path

NLTK_ENGLISH_FILE = resource_path("nltk_english_stopwords.txt")


def nltk_english_stop_words() -> frozenset:
    """nltk.corpus.stopwords.words("english"): 179 words."""
    with open(NLTK_ENGLISH_FILE, encoding="utf-8") as f:
        return frozenset(line.strip() for line in f if line.strip() and not line.startswith("#"))


def sklearn_english_stop_words() -> frozenset:
    """scikit-learn's ENGLISH_STOP_WORDS: 318 words."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS  # pylint: disable=import-outside-toplevel

    return frozenset(ENGLISH_STOP_WORDS)
