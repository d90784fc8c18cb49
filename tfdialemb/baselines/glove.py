"""Average GloVe embeddings (Pennington et al. 2014), a baseline of DialogueCSE's Table 2.

A sentence is embedded as the mean of the word vectors of its known tokens. Tokens are BERT's basic
words (`basic_tokenize`: split on whitespace and punctuation, CJK characters apart), lower-cased
with accents kept, since GloVe's vocabularies are lower-case words with their accents. A sentence
without a known token gets the zero vector (cosine 0 with everything).

The vectors are read from a local text file, `word v1 ... vd` per line (GloVe), optionally after
word2vec's `count dim` header line. The file is streamed and only the words the sentences need are
kept, so memory holds those vectors, not the whole vocabulary (2.2M words × 300 for Common Crawl).
"""
import os
from typing import Dict, Iterable, Sequence, Set

import numpy as np

GLOVE_SOURCE = "https://nlp.stanford.edu/projects/glove/"


def _check_file(path: str) -> None:
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"{path}: word-vector file does not exist. Average GloVe reads a local GloVe (or "
            f"word2vec text) file: download one from {GLOVE_SOURCE} (e.g. glove.840B.300d.zip), "
            "unzip it and pass the .txt path; tfdialemb downloads nothing.")


def _is_word2vec_header(fields: Sequence[str]) -> bool:
    return len(fields) == 2 and all(field.isdigit() for field in fields)


def read_vector_size(path: str) -> int:
    """d, from word2vec's header or from the first vector line."""
    _check_file(path)
    with open(path, encoding="utf-8", errors="replace") as f:
        fields = f.readline().rstrip().split(" ")
    if _is_word2vec_header(fields):
        return int(fields[1])
    if len(fields) < 2:
        raise ValueError(f"{path}:1: expected `word v1 ... vd` or a `count dim` header")
    return len(fields) - 1


def read_word_vectors(path: str, words: Iterable[str]) -> Dict[str, np.ndarray]:
    """The vectors [d] float32 of those of `words` that the file holds (the first line wins)."""
    size = read_vector_size(path)
    wanted: Set[str] = set(words)
    vectors: Dict[str, np.ndarray] = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, start=1):
            head = line.split(" ", 1)[0]
            if head not in wanted or head in vectors:
                continue
            fields = line.rstrip().rsplit(" ", size)
            if number == 1 and _is_word2vec_header(fields):
                continue
            if len(fields) != size + 1:
                raise ValueError(f"{path}:{number}: expected a word and {size} numbers")
            if fields[0] != head:
                continue  # an entry with spaces, e.g. Common Crawl's ". . .": never a token
            try:
                vectors[head] = np.array(fields[1:], np.float32)
            except ValueError:
                raise ValueError(f"{path}:{number}: expected a word and {size} numbers") from None
    return vectors


def tokenize(texts: Sequence[str]) -> list:
    """The lower-cased basic words of each text."""
    from tfdialemb.text.tokenizer import basic_tokenize  # pylint: disable=import-outside-toplevel

    words = basic_tokenize(list(texts), lower_case=False).to_list()
    return [[word.decode("utf-8").lower() for word in row] for row in words]


class GloveEmbedder:
    """Texts → mean GloVe vectors [n, d]; each needed word is looked up in the file once.

    `tokens` and `known_tokens` count the tokens embedded so far and those with a vector, and
    `texts_without_vectors` the texts that got the zero vector: the coverage a report shows.
    """

    def __init__(self, path: str):
        self.path = path
        self.dim = read_vector_size(path)
        self._vectors: Dict[str, np.ndarray] = {}
        self._looked_up: Set[str] = set()
        self.tokens = self.known_tokens = self.texts_without_vectors = 0

    @property
    def words_found(self) -> int:
        return len(self._vectors)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = tokenize(texts)
        missing = {word for row in rows for word in row} - self._looked_up
        if missing:
            self._vectors.update(read_word_vectors(self.path, missing))
            self._looked_up |= missing
        output = np.zeros([len(rows), self.dim], np.float32)
        for i, row in enumerate(rows):
            known = [self._vectors[word] for word in row if word in self._vectors]
            self.tokens += len(row)
            self.known_tokens += len(known)
            if known:
                output[i] = np.mean(known, axis=0)
            else:
                self.texts_without_vectors += 1
        return output

    def coverage(self) -> Dict[str, float]:
        """What the report records: vector size, words found, token and text coverage."""
        return {"dim": self.dim, "words_found": self.words_found,
                "token_coverage": self.known_tokens / max(self.tokens, 1),
                "texts_without_vectors": self.texts_without_vectors}
