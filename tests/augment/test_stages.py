"""Stage clustering on hand-worked matrices, and the batched context-response matrices."""
import numpy as np
import pytest
import scipy.sparse
from sklearn.cluster import AgglomerativeClustering

from tfdialemb.augment.similarity_sources import SentenceEncoderSimilarity, UtteranceSimilarity
from tfdialemb.augment.stages import (StageOperation, cluster_stages, contiguous_stages, released_clusters,
                                      utterance_distances)
from topic_source import TOPICS, TopicSource, TopicUtterances, one_hot, texts, topic_dialogue

# Six utterances; distances chosen so that average linkage over all pairs and sklearn's
# chain-connectivity clustering part ways.
SIX = np.array([
    [0.0, 0.1, 0.9, 0.9, 0.9, 0.9],
    [0.1, 0.0, 0.9, 0.9, 0.9, 0.9],
    [0.9, 0.9, 0.0, 0.2, 0.2, 0.2],
    [0.9, 0.9, 0.2, 0.0, 0.9, 0.9],
    [0.9, 0.9, 0.2, 0.9, 0.0, 0.1],
    [0.9, 0.9, 0.2, 0.9, 0.1, 0.0],
])


def test_distances_pair_the_earlier_context_with_the_later_utterance():
    # S[a, b] = sim(context ending at a, utterance b + 1); d(i, j) = 1 - S[i, j - 1] for i < j.
    s = np.array([[0.8, 0.3], [0.7, 0.6]])
    expected = np.array([[0.0, 1 - 0.8, 1 - 0.3],
                         [1 - 0.8, 0.0, 1 - 0.6],
                         [1 - 0.3, 1 - 0.6, 0.0]])  # s[1, 0] (a context after its target) unused
    np.testing.assert_allclose(utterance_distances(s), expected)


def test_contiguous_average_linkage_by_hand():
    # Neighbour gaps 0.1 (0|1), 0.9, 0.2 (2|3), 0.9, 0.1 (4|5): merge 0+1, then 4+5 (leftmost
    # first), then 2+3. Runs [01][23][45]: mean([01],[23]) = 0.9; mean([23],[45]) =
    # (0.2 + 0.2 + 0.9 + 0.9) / 4 = 0.55, so [23] joins [45].
    found = contiguous_stages(SIX, [2, 3, 4])
    assert found[4] == [[0, 1], [2], [3], [4, 5]]
    assert found[3] == [[0, 1], [2, 3], [4, 5]]
    assert found[2] == [[0, 1], [2, 3, 4, 5]]


def test_sklearn_chain_connectivity_is_not_average_linkage():
    """Why the contiguous merge is ours: with a chain graph sklearn sees only border distances,
    so [23] is as far from [01] (0.9 at 1|2) as from [45] (0.9 at 3|4) and joins [01]."""
    chain = scipy.sparse.diags([np.ones(5), np.ones(5)], [-1, 1])
    labels = AgglomerativeClustering(n_clusters=2, linkage="average", metric="precomputed",
                                     connectivity=chain).fit_predict(SIX)
    assert labels[0] == labels[3] != labels[4]
    assert contiguous_stages(SIX, [2])[2] == [[0, 1], [2, 3, 4, 5]]


def test_released_clustering_may_join_far_apart_utterances():
    # d(0,4) = 0.05; 0 is 0.9 and 4 is 0.8 from 1, 2, 3; d(1,2) = 0.1, d(2,3) = 0.15, d(1,3) = 0.2.
    # Unconstrained: {0,4} at 0.05, {1,2} at 0.1, {1,2}+3 at mean 0.175 -> {0,4}, {1,2,3}.
    # Contiguous: 1+2 at 0.1, [12]+3 at 0.175, then [123]+[4] at 0.8 (before [0]+[123] at 0.9).
    d = np.full((5, 5), 0.9)
    d[4, 1:4] = d[1:4, 4] = 0.8
    np.fill_diagonal(d, 0.0)
    d[0, 4] = d[4, 0] = 0.05
    d[1, 2] = d[2, 1] = 0.1
    d[2, 3] = d[3, 2] = 0.15
    d[1, 3] = d[3, 1] = 0.2
    # Listed in scikit-learn's label order, as prune.py `_cluster` returns them (crop's tie-break).
    labels = AgglomerativeClustering(n_clusters=2, linkage="average", metric="precomputed").fit_predict(d)
    assert released_clusters(d, [2])[2] == [[0, 4], [1, 2, 3]][::1 if labels[0] == 0 else -1]
    assert cluster_stages(d, [2], "contiguous")[2] == [[0], [1, 2, 3, 4]]
    assert cluster_stages(d, [2])[2] == released_clusters(d, [2])[2]  # the default


def test_contiguous_stages_are_runs_covering_the_dialogue():
    rng = np.random.default_rng(0)
    for length in (3, 7, 15):
        a = rng.random((length, length))
        d = utterance_distances(a[:-1, :-1])
        for n, stages in contiguous_stages(d, range(1, length + 1)).items():
            assert len(stages) == n
            assert [i for stage in stages for i in stage] == list(range(length))


def test_block_matrix_gives_its_blocks():
    blocks = [0, 0, 0, 1, 1, 1, 1, 2, 2]
    s = np.array([[0.95 if blocks[a] == blocks[b + 1] else 0.05 for b in range(8)] for a in range(8)])
    assert contiguous_stages(utterance_distances(s), [3])[3] == [[0, 1, 2], [3, 4, 5, 6], [7, 8]]


def test_bad_counts_and_clustering_are_refused():
    with pytest.raises(ValueError, match="cannot cut 6 utterances"):
        contiguous_stages(SIX, [7])
    with pytest.raises(ValueError, match="unknown stage clustering"):
        cluster_stages(SIX, [2], "ward")


def test_matrices_follow_the_released_windows_and_batch_dialogues():
    source = TopicSource(context=3)
    similarity = UtteranceSimilarity(source)
    first = ["hotel 0", "hotel 1", "taxi 2", "taxi 3", "food 4"]
    second = ["bank 0", "music 1"]
    matrices = similarity.matrices([first, second])
    # One call per kind for both dialogues; contexts as make_batch_from_dia: dia[max(0, i-3):i].
    assert [kind for kind, _ in source.calls] == ["contexts", "responses"]
    assert source.calls[0][1] == [("hotel 0",), ("hotel 0", "hotel 1"), ("hotel 0", "hotel 1", "taxi 2"),
                                  ("hotel 1", "taxi 2", "taxi 3"), ("bank 0",)]
    expected = np.array([[float(one_hot(first[a]) @ one_hot(first[b + 1])) for b in range(4)] for a in range(4)])
    np.testing.assert_allclose(matrices[0], expected)
    np.testing.assert_allclose(matrices[1], [[0.0]])
    similarity.matrices([first])
    assert len(source.calls) == 2  # kept until clear()
    similarity.clear()
    similarity.matrices([first])
    assert len(source.calls) == 4


def test_order_matrices_of_one_dialogue_read_one_product():
    source = TopicSource(context=2)
    similarity = UtteranceSimilarity(source)
    texts = ["hotel 0", "taxi 1", "hotel 2", "food 3"]
    orders = [texts, [texts[i] for i in (2, 3, 0, 1)], [texts[i] for i in (1, 0, 3, 2)], texts[:1]]
    similarity.prepare(orders)
    calls = len(source.calls)
    matrices = similarity.order_matrices(orders)
    assert len(source.calls) == calls  # read from what was prepared
    for order, matrix in zip(orders, matrices):
        # TopicSource: a context is about its last utterance, so S[a, b] = [topic a == topic b + 1].
        expected = [[float(order[a].split()[0] == order[b + 1].split()[0]) for b in range(len(order) - 1)]
                    for a in range(len(order) - 1)]
        size = len(order) - 1
        np.testing.assert_array_equal(matrix, np.array(expected, np.float32).reshape(size, size))


def test_a_per_utterance_source_embeds_each_utterance_once_and_fills_context_slots():
    """The per-utterance path gives the matrices of the context/response path (a second source
    computing the same similarities), embedding every distinct utterance once, and lays each
    context out oldest first with its empty slots zero."""
    first = ["hotel 0", "hotel 1", "taxi 2", "taxi 3", "food 4"]
    second = ["bank 0", "hotel 1", "music 2"]  # "hotel 1" also in the first
    source = TopicUtterances(context=3)
    matrices = UtteranceSimilarity(source).matrices([first, second])
    for got, expected in zip(matrices, UtteranceSimilarity(TopicSource(context=3)).matrices([first, second])):
        np.testing.assert_array_equal(got, expected)
    assert source.calls[0] == ("utterances", first + ["bank 0", "music 2"])
    [(kind, slots)] = [call for call in source.calls if call[0] == "slots"]
    assert slots.shape == (4 + 2, 3, len(TOPICS))  # the distinct contexts
    np.testing.assert_array_equal(slots[0], [one_hot("hotel 0"), np.zeros(len(TOPICS)), np.zeros(len(TOPICS))])
    np.testing.assert_array_equal(slots[3], [one_hot("hotel 1"), one_hot("taxi 2"), one_hot("taxi 3")])


def test_shuffle_candidates_cost_a_per_utterance_source_no_encoder_pass():
    from tfdialemb.augment.shuffle import StageShuffle

    dialogue = topic_dialogue("d", [("hotel", 4), ("taxi", 4), ("food", 4), ("bank", 3)])
    source = TopicUtterances(context=3)
    similarity = UtteranceSimilarity(source)
    [result] = StageShuffle(similarity, seed=2).augment([dialogue])
    assert sorted(result.turns, key=lambda t: int(t.text.split()[1])) == list(dialogue.turns)
    embedded = [text for kind, texts in source.calls if kind == "utterances" for text in texts]
    assert embedded == texts(dialogue)  # each utterance once, for the original and all 9 candidates
    [expected] = StageShuffle(UtteranceSimilarity(TopicSource(context=3)), seed=2).augment([dialogue])
    assert result == expected


def test_sentence_encoder_joins_the_context_by_newlines_and_dot_keeps_norms():
    class Recorder:
        def __init__(self):
            self.texts = []

        def embed(self, texts, batch_size):
            self.texts.append(list(texts))
            return np.array([[len(t), 1.0] for t in texts])

    recorder = Recorder()
    similarity = UtteranceSimilarity(SentenceEncoderSimilarity(recorder, context=2), "dot")
    matrix = similarity.matrices([["ab", "cde", "f"]])[0]
    assert recorder.texts == [["ab", "ab\ncde"], ["cde", "f"]]
    np.testing.assert_allclose(matrix, [[2 * 3 + 1, 2 * 1 + 1], [6 * 3 + 1, 6 * 1 + 1]])
    recorder.texts = []
    cosine = UtteranceSimilarity(SentenceEncoderSimilarity(recorder, context=1)).matrices([["ab", "cde", "ab"]])[0]
    assert recorder.texts == [["ab", "cde"]]  # one utterance per context: each text embedded once
    cos = (2 * 3 + 1) / np.hypot(2, 1) / np.hypot(3, 1)
    np.testing.assert_allclose(cosine, [[cos, 1.0], [1.0, cos]], rtol=1e-6)


def test_a_source_giving_the_wrong_number_of_rows_is_named():
    class Short(TopicSource):
        def embed_responses(self, texts):
            return super().embed_responses(texts)[:1]

    with pytest.raises(ValueError, match="Short.embed_responses gave shape"):
        UtteranceSimilarity(Short()).matrices([["hotel 0", "taxi 1", "food 2"]])


def test_stage_counts_follow_the_released_ranges():
    crop_like = StageOperation(UtteranceSimilarity(TopicSource()), min_turns=6, min_stages=2)
    shuffle_like = StageOperation(UtteranceSimilarity(TopicSource()), min_turns=12, min_stages=4)
    assert list(crop_like.stage_counts(5)) == []
    assert list(crop_like.stage_counts(6)) == [2]
    assert list(crop_like.stage_counts(11)) == [2, 3]
    assert list(shuffle_like.stage_counts(11)) == []
    assert list(shuffle_like.stage_counts(12)) == [4]
    assert list(shuffle_like.stage_counts(17)) == [4, 5]


def test_sentence_encoder_checkpoint_mean_pools_each_context(hf_safetensors_dir):
    """--sentence_encoder reads a checkpoint as `load_pretrained` does; a context of 2 is its
    utterances joined by a newline, mean-pooled, against each utterance, cosine."""
    from tfdialemb.inference.kinds import load

    source = SentenceEncoderSimilarity(load(hf_safetensors_dir, "sentence", {"pooling": "mean"}), context=2,
                                       batch_size=2)
    utterances = ["hello world", "how are you ?", "fine thanks", "book a taxi please"]
    [matrix] = UtteranceSimilarity(source).matrices([utterances])
    encoder, tokenizer = source.embedder.encoder, source.embedder.tokenizer  # the loaded weights
    texts = ["\n".join(utterances[max(0, a - 1):a + 1]) for a in range(3)] + utterances[1:]
    inputs = tokenizer(texts)  # eager, all at once, pooled here
    states = encoder(inputs)["sequence_output"].numpy()
    mask = inputs["input_mask"].numpy()[..., None]
    pooled = (states * mask).sum(axis=1) / mask.sum(axis=1)
    unit = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    np.testing.assert_allclose(matrix, unit[:3] @ unit[3:].T, atol=1e-5)


def test_the_released_clustering_is_the_default_of_the_flags_and_the_operations():
    """What built the thesis' sets: `--stage_clustering` unset gives crop and shuffle the released
    clustering."""
    from absl import flags

    from tfdialemb.augment import flags as augment_flags
    from tfdialemb.augment.crop import StageCrop
    from tfdialemb.augment.shuffle import StageShuffle

    flag_values = flags.FlagValues()
    augment_flags.define_flags(flag_values)
    flag_values(["augment"])
    settings = augment_flags.operation_settings(augment_flags.values(flag_values))
    assert settings["crop"]["clustering"] == settings["shuffle"]["clustering"] == "released"
    similarity = UtteranceSimilarity(TopicSource())
    assert StageCrop(similarity).clustering == StageShuffle(similarity).clustering == "released"


def test_the_released_reading_keeps_the_first_utterances_and_inverts_the_similarity():
    """--context_response_reading=released (the version that built a-h, a-l-m, a-h-m): the whole
    history up to a, cut by the negative padding to the dialogue's first 3 utterances; TopicSource
    reads a context by its last utterance, so a = 3 is about "food 2", not "bank 3"."""
    texts = ["hotel 0", "taxi 1", "food 2", "bank 3", "music 4"]
    released = UtteranceSimilarity(TopicSource(context=3), reading="released")
    assert released.windows(texts) == [("hotel 0",), ("hotel 0", "taxi 1"), ("hotel 0", "taxi 1", "food 2"),
                                       ("hotel 0", "taxi 1", "food 2")]
    # Targets taxi 1, food 2, bank 3, music 4.
    expected = {"paper": [[0, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]],
                "released": [[0, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 1, 0, 0]]}
    for reading, matrix in expected.items():
        for source in (TopicSource(context=3), TopicUtterances(context=3)):
            [got] = UtteranceSimilarity(source, reading=reading).matrices([texts])
            np.testing.assert_array_equal(got, matrix)
    # prune.py:78 then: d(i, j) = 1 / (S[i, j - 1] + 1e-5).
    s = np.array([[0.8, 0.3], [0.7, 0.6]])
    d = utterance_distances(s, "released")
    np.testing.assert_allclose([d[0, 1], d[0, 2], d[1, 2], d[2, 0]], [1 / 0.80001, 1 / 0.30001, 1 / 0.60001, 1 / 0.30001])
    assert np.all(np.diag(d) == 0)


def test_the_released_reading_needs_the_released_projection():
    from tfdialemb.augment import operations

    class Projected(TopicSource):
        def __init__(self, width):
            super().__init__()
            self.width = width

    def projecting(width):
        return lambda path, kind: Projected(width)

    with pytest.raises(ValueError, match="projection 128; model projects to 256"):
        operations.load_similarity("context_response", "model", projecting(256), context_response_reading="released")
    assert operations.load_similarity("context_response", "model", projecting(256)).reading == "paper"
    assert operations.load_similarity("context_response", "model", projecting(128),
                                      context_response_reading="released").reading == "released"
