"""sentence-transformers' `util` similarity and search functions on numpy arrays: `cos_sim`,
`dot_score` and `semantic_search`, with its signatures and result shapes
(https://sbert.net/docs/package_reference/util.html), so code written against
`sentence_transformers.util` runs on tfdialemb embeddings.

Embeddings go in as numpy arrays, nested lists or tf.Tensors (what `encode` returns with
`convert_to_numpy=False`); a score matrix comes back as a numpy array, or as a tf.Tensor when an
input was one, as sentence-transformers keeps torch tensors torch tensors.
"""
from typing import Callable, Dict, List, Union

import numpy as np

from tfdialemb.core.similarity import cosine_matrix

ScoreFunction = Callable[[np.ndarray, np.ndarray], np.ndarray]


def cos_sim(a, b):
    """cos(a_i, b_j) [n, m] of `a` [n, d] and `b` [m, d]; a single vector [d] counts as one row,
    as in sentence-transformers (its `cos_sim` unsqueezes 1-D inputs). A zero row scores 0."""
    return _like_inputs(cosine_matrix(_rows(a, "a"), _rows(b, "b")), a, b)


def dot_score(a, b):
    """a_i · b_j [n, m] of `a` [n, d] and `b` [m, d] (sentence-transformers' `dot_score`): the
    cosine for unit vectors (`normalize_embeddings=True`), cheaper than `cos_sim`."""
    return _like_inputs(_rows(a, "a") @ _rows(b, "b").T, a, b)


def semantic_search(query_embeddings, corpus_embeddings, query_chunk_size: int = 100,
                    corpus_chunk_size: int = 500000, top_k: int = 10,
                    score_function: ScoreFunction = cos_sim) -> List[List[Dict[str, Union[int, float]]]]:
    """The `top_k` corpus entries nearest each query, as sentence-transformers' `semantic_search`
    returns them: a list with one entry per query (one for a single vector [d]), each a list of
    {"corpus_id": int, "score": float} sorted by score, highest first, at most `top_k` long (the
    whole corpus when it is smaller).

    Scores come from `score_function(query_rows, corpus_rows)` (numpy [q, c]) over chunks of
    `query_chunk_size` queries and `corpus_chunk_size` corpus rows, which bound the memory of one
    score matrix. Equal scores rank the lower corpus_id first (sentence-transformers leaves the
    order of ties to torch.topk), so a result does not depend on the chunk sizes."""
    queries, corpus = _rows(query_embeddings, "query_embeddings"), _rows(corpus_embeddings, "corpus_embeddings")
    for name, value in (("query_chunk_size", query_chunk_size), ("corpus_chunk_size", corpus_chunk_size),
                        ("top_k", top_k)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if queries.shape[1] != corpus.shape[1]:
        raise ValueError(f"query_embeddings have {queries.shape[1]} dimensions, corpus_embeddings "
                         f"{corpus.shape[1]}")
    results = []
    for query_start in range(0, len(queries), query_chunk_size):
        chunk = queries[query_start:query_start + query_chunk_size]
        best_ids = np.zeros([len(chunk), 0], np.int64)
        best_scores = np.zeros([len(chunk), 0], np.float64)
        for corpus_start in range(0, len(corpus), corpus_chunk_size):
            scores = np.asarray(score_function(chunk, corpus[corpus_start:corpus_start + corpus_chunk_size]))
            ids = np.broadcast_to(np.arange(corpus_start, corpus_start + scores.shape[1]), scores.shape)
            best_ids, best_scores = _top(np.concatenate([best_ids, ids], axis=1),
                                         np.concatenate([best_scores, scores], axis=1), top_k)
        results.extend([{"corpus_id": int(i), "score": float(s)} for i, s in zip(row_ids, row_scores)]
                       for row_ids, row_scores in zip(best_ids, best_scores))
    return results


def _top(ids: np.ndarray, scores: np.ndarray, k: int):
    """Per row, the `k` highest scores with their ids, highest first, the lower id first on a tie."""
    order = np.lexsort((ids, -scores), axis=1)[:, :k]
    return np.take_along_axis(ids, order, axis=1), np.take_along_axis(scores, order, axis=1)


def _rows(embeddings, name: str) -> np.ndarray:
    """`embeddings` as a float numpy matrix [n, d] (a vector [d] as one row)."""
    array = np.asarray(embeddings)
    if array.ndim == 1:
        array = array[np.newaxis]
    if array.ndim != 2 or not np.issubdtype(array.dtype, np.number):
        raise ValueError(f"{name} must be a vector [d] or a matrix [n, d] of numbers, got shape {array.shape} "
                         f"of {array.dtype}")
    return array if np.issubdtype(array.dtype, np.floating) else array.astype(np.float32)


def _like_inputs(scores: np.ndarray, a, b):
    """`scores` as a tf.Tensor when an input was a tf.Tensor, else as numpy."""
    if _is_tensor(a) or _is_tensor(b):
        import tensorflow as tf  # pylint: disable=import-outside-toplevel

        return tf.convert_to_tensor(scores)
    return scores


def _is_tensor(value) -> bool:
    return type(value).__module__.startswith("tensorflow")
