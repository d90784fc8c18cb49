"""`tfdialemb.util` against sentence-transformers' documented results, worked by hand on six corpus
vectors with ties, a zero row and an opposite one."""
import math

import numpy as np
import pytest
import tensorflow as tf

from tfdialemb import util

CORPUS = np.array([[1, 0], [0, 1], [1, 1], [2, 0], [-1, 0], [0, 0]], np.float32)
QUERIES = np.array([[1, 0], [0, 3]], np.float32)
R = 1 / math.sqrt(2)
COSINES = [[1, 0, R, 1, -1, 0],  # by hand: c3 points as c0 does, c5 is the zero vector
           [0, 1, R, 0, 0, 0]]
# Highest first; equal scores in corpus order (c0 before c3, c1 before c5, ...).
NEAREST = [[(0, 1.0), (3, 1.0), (2, R), (1, 0.0), (5, 0.0), (4, -1.0)],
           [(1, 1.0), (2, R), (0, 0.0), (3, 0.0), (4, 0.0), (5, 0.0)]]


def _pairs(hits):
    return [[(hit["corpus_id"], hit["score"]) for hit in query] for query in hits]


def _assert_hits(hits, expected):
    assert all(set(hit) == {"corpus_id", "score"} and type(hit["corpus_id"]) is int and type(hit["score"]) is float
               for query in hits for hit in query)
    got = _pairs(hits)
    assert [[i for i, _ in query] for query in got] == [[i for i, _ in query] for query in expected]
    np.testing.assert_allclose([[s for _, s in query] for query in got],
                               [[s for _, s in query] for query in expected], atol=1e-6)


def test_cos_sim_and_dot_score_are_score_matrices():
    np.testing.assert_allclose(util.cos_sim(QUERIES, CORPUS), COSINES, atol=1e-6)
    np.testing.assert_allclose(util.dot_score(QUERIES, CORPUS), QUERIES @ CORPUS.T)
    single = util.cos_sim([1.0, 0.0], CORPUS.tolist())  # a vector is one row, a nested list a matrix
    assert isinstance(single, np.ndarray) and single.shape == (1, 6)
    np.testing.assert_allclose(single, [COSINES[0]], atol=1e-6)
    as_tensor = util.cos_sim(tf.constant(QUERIES), CORPUS)  # tensor in, tensor out
    assert isinstance(as_tensor, tf.Tensor)
    np.testing.assert_allclose(as_tensor.numpy(), COSINES, atol=1e-6)


def test_semantic_search_ranks_every_query_highest_first_ties_in_corpus_order():
    _assert_hits(util.semantic_search(QUERIES, CORPUS), NEAREST)  # top_k=10 > 6: the whole corpus
    _assert_hits(util.semantic_search(QUERIES, CORPUS, top_k=3), [query[:3] for query in NEAREST])
    # Chunks change the memory bound, not the result.
    _assert_hits(util.semantic_search(QUERIES, CORPUS, query_chunk_size=1, corpus_chunk_size=2, top_k=4),
                 [query[:4] for query in NEAREST])
    _assert_hits(util.semantic_search(tf.constant(QUERIES[1]), tf.constant(CORPUS), top_k=2), [NEAREST[1][:2]])


def test_semantic_search_with_dot_score():
    hits = util.semantic_search(QUERIES[:1], CORPUS, top_k=4, score_function=util.dot_score)
    _assert_hits(hits, [[(3, 2.0), (0, 1.0), (2, 1.0), (1, 0.0)]])


def test_bad_arguments_are_refused_in_one_line():
    with pytest.raises(ValueError, match="top_k must be a positive integer, got 0"):
        util.semantic_search(QUERIES, CORPUS, top_k=0)
    with pytest.raises(ValueError, match="corpus_chunk_size must be a positive integer"):
        util.semantic_search(QUERIES, CORPUS, corpus_chunk_size=0.5)
    with pytest.raises(ValueError, match="query_embeddings have 2 dimensions, corpus_embeddings 3"):
        util.semantic_search(QUERIES, np.ones([4, 3]))
    with pytest.raises(ValueError, match=r"b must be a vector \[d\] or a matrix \[n, d\] of numbers"):
        util.cos_sim(QUERIES, np.ones([2, 2, 2]))
