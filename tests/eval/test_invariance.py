"""The invariance analysis: which views take part, the split by source, probes on embeddings whose
augmentation is (or is not) recoverable, and the hidden-layer views checked against transformers."""
import numpy as np
import pytest
import tensorflow as tf
import tiny_bert
from conftest import FOUR_LAYERS

from tfdialemb.dialogue import Dialogue, DialogueFormatError, Turn, role_ids, write_dialogues
from tfdialemb.encoders import load_pretrained
from tfdialemb.eval.invariance import (
    CLASSES,
    evaluate_invariance,
    read_views,
    representations,
    sample_views,
)
from tfdialemb.eval.probe_split import held_out_split
from tfdialemb.inference.dialogue_embedder import DialogueEmbedder


def _source_of(dialogue):
    return dialogue.labels.get("source_id", dialogue.id)


def test_views_taking_part_and_those_left_out(tmp_path, augmented_file):
    extra = [Dialogue("lonely", (Turn("a", "hi"),), {"augmentations": []}),
             Dialogue("lonely/insert", (Turn("a", "hi the"),), {"augmentations": ["insert"], "source_id": "lonely"}),
             Dialogue("s0/twice", (Turn("a", "hi"),), {"augmentations": ["crop", "insert"], "source_id": "s0"})]
    path = tmp_path / "augmented.jsonl"
    path.write_text(augmented_file.read_text(encoding="utf-8")
                    + "".join(d.to_line() + "\n" for d in extra), encoding="utf-8")
    views = read_views(str(path))
    assert views.classes == list(CLASSES) == ["none", "insert", "replace", "crop", "shuffle"]
    assert views.complete == ["s0", "s1", "s2", "s3"] and list(views.by_source) == views.complete + ["lonely"]
    assert views.left_out == {"translate": 4, "crop+insert": 1}
    assert views.incomplete_sources == 1  # "lonely" has no replace, crop or shuffle view


def test_a_file_without_originals_is_refused(tmp_path):
    write_dialogues([Dialogue("a/insert", (Turn("a", "x"),), {"augmentations": ["insert"], "source_id": "a"})],
                    str(tmp_path / "views.jsonl"))
    with pytest.raises(ValueError, match=r"needs the originals \(labels.augmentations = \[\]\)"):
        read_views(str(tmp_path / "views.jsonl"))


@pytest.mark.parametrize("labels, message", [
    ({"augmentations": 5, "source_id": "a"}, "labels.augmentations must be a list of operation names, got 5"),
    ({"augmentations": "insert", "source_id": "a"},
     "labels.augmentations must be a list of operation names, got 'insert'"),
    ({"augmentations": [1], "source_id": "a"}, r"labels.augmentations must be a list of operation names, got \[1\]"),
    ({"augmentations": ["insert"], "source_id": ["a"]}, r"labels.source_id must be the original's id, got \['a'\]"),
])
def test_malformed_view_labels_name_their_line(tmp_path, labels, message):
    write_dialogues([Dialogue("a", (Turn("a", "x"),), {"augmentations": []}),
                     Dialogue("a/1", (Turn("a", "y"),), labels)], str(tmp_path / "views.jsonl"))
    with pytest.raises(DialogueFormatError, match=r"views.jsonl:2: dialogue 'a/1': " + message):
        read_views(str(tmp_path / "views.jsonl"))


def test_released_sampling_draws_one_view_per_source_and_all_views_splits_by_source(augmented_file):
    views = read_views(str(augmented_file))
    dialogues, names, sources = sample_views(views, "released", seed=0)
    assert sources == ["s0", "s1", "s2", "s3"] and len(dialogues) == 4
    assert [CLASSES[0] if not d.labels["augmentations"] else d.labels["augmentations"][0] for d in dialogues] == names
    dialogues, names, sources = sample_views(views, "all_views", seed=0)
    assert len(dialogues) == 20 and names.count("shuffle") == 4
    fit, test = held_out_split(len(dialogues), 0.25, seed=0, groups=sources)
    assert {sources[i] for i in fit}.isdisjoint({sources[i] for i in test})
    assert {_source_of(dialogues[i]) for i in test} == {sources[i] for i in test}


def _embed_by(rule):
    """embed(dialogues) → {"embedding": rule(dialogue) per row}."""
    return lambda dialogues: {"embedding": np.stack([rule(d) for d in dialogues])}


def test_a_recoverable_augmentation_is_predicted_perfectly(augmented_file):
    rng = np.random.default_rng(0)
    directions = {name: np.eye(len(CLASSES))[i] for i, name in enumerate(CLASSES)}
    noise = {f"s{i}": rng.normal(scale=0.05, size=len(CLASSES)) for i in range(4)}

    def rule(dialogue):
        name = (dialogue.labels["augmentations"] or ["none"])[0]
        return directions[name] + noise[_source_of(dialogue)]

    result = evaluate_invariance(str(augmented_file), _embed_by(rule), sampling="all_views", k=3)
    probes = result["metrics"]["representations"]["embedding"]
    assert {name: probes[name] for name in ("logreg_accuracy", "logreg_converged", "3nn_accuracy",
                                            "cosine_centroid_accuracy")} == {
        "logreg_accuracy": 1.0, "logreg_converged": True, "3nn_accuracy": 1.0, "cosine_centroid_accuracy": 1.0}
    assert result["metrics"]["classes"] == {name: 4 for name in CLASSES}
    assert (result["metrics"]["fit_views"], result["metrics"]["test_views"]) == (15, 5)
    assert result["metrics"]["majority_accuracy"] == 0.2


def test_an_invariant_embedding_leaves_only_tied_votes(augmented_file):
    # Every view of a source embeds as its original: the nearest source brings one view of each
    # class (a 5-way tie → the first class, none), and all class centroids coincide.
    points = {f"s{i}": np.array([np.cos(i), np.sin(i), 0.5]) for i in range(4)}
    result = evaluate_invariance(str(augmented_file), _embed_by(lambda d: points[_source_of(d)]),
                                 sampling="all_views", k=5)
    probes = result["metrics"]["representations"]["embedding"]
    assert probes["5nn_accuracy"] == 0.2 and probes["cosine_centroid_accuracy"] == 0.2
    assert probes["logreg_accuracy"] <= 0.4


def test_raw_and_normalised_embeddings_differ_where_the_norm_carries_the_class(augmented_file):
    """Each view is its source's direction (four close unit vectors) scaled by its class (1 for
    none .. 5 for shuffle). Raw, the 5 nearest neighbours of a held-out view are the three views of
    its class from the other sources (≤ 5 · 0.09 away) and two of a neighbouring scale (≥ 1
    away): every vote is right. Normalised, every view of a source is one point; its 5 nearest
    are one view of each class from the nearest source, a 5-way tie that goes to the first class
    (none): 1 in 5 right. Logistic regression reads the norm only from raw embeddings."""
    scale = {name: i + 1.0 for i, name in enumerate(CLASSES)}
    directions = {f"s{i}": np.array([1.0, 0.03 * i, 0.02 * i * i]) for i in range(4)}

    def rule(dialogue):
        direction = directions[_source_of(dialogue)]
        return scale[(dialogue.labels["augmentations"] or ["none"])[0]] * direction / np.linalg.norm(direction)

    results = {embeddings: evaluate_invariance(str(augmented_file), _embed_by(rule), sampling="all_views",
                                               embeddings=embeddings)["metrics"]
               for embeddings in ("raw", "normalised")}
    raw, normalised = (results[e]["representations"]["embedding"] for e in ("raw", "normalised"))
    assert (raw["5nn_accuracy"], normalised["5nn_accuracy"]) == (1.0, 0.2)
    assert raw["logreg_accuracy"] > normalised["logreg_accuracy"]
    assert results["raw"]["embeddings"] == "raw"
    assert evaluate_invariance(str(augmented_file), _embed_by(rule), sampling="all_views")["metrics"] == results["raw"]


def test_the_cosine_column_is_the_mean_original_view_cosine_per_augmentation(tmp_path, augmented_file):
    """Originals embed as 2·e1, a view of class c as 3·(cos θ_c e1 + sin θ_c e2): its cosine with
    the original is cos θ_c whatever the norms. A source with only an insert view (cosine 0.3)
    counts in the insert mean though it is not probed; a view without its original counts nowhere."""
    cosine = {"insert": 0.8, "replace": 0.6, "crop": 0.0, "shuffle": -0.6, "translate": 0.5}
    extra = [Dialogue("lonely", (Turn("a", "hi"),), {"augmentations": []}),
             Dialogue("lonely/insert", (Turn("a", "hi the"),), {"augmentations": ["insert"], "source_id": "lonely"}),
             Dialogue("orphan/crop", (Turn("a", "hi"),), {"augmentations": ["crop"], "source_id": "orphan"})]
    path = tmp_path / "augmented.jsonl"
    path.write_text(augmented_file.read_text(encoding="utf-8") + "".join(d.to_line() + "\n" for d in extra),
                    encoding="utf-8")

    def rule(dialogue):
        name = (dialogue.labels["augmentations"] or ["none"])[0]
        if name == "none":
            return np.array([2.0, 0.0, 0.0])
        c = 0.3 if dialogue.id == "lonely/insert" else cosine[name]
        return 3.0 * np.array([c, np.sqrt(1.0 - c * c), 0.0])

    metrics = evaluate_invariance(str(path), _embed_by(rule), sampling="all_views")["metrics"]
    insert = (4 * 0.8 + 0.3) / 5
    expected = {"insert": insert, "replace": 0.6, "crop": 0.0, "shuffle": -0.6,
                "mean": (insert + 0.6 + 0.0 - 0.6) / 4}
    got = metrics["representations"]["embedding"]["view_cosine"]
    assert got.keys() == expected.keys()
    for name, value in expected.items():
        assert got[name] == pytest.approx(value, abs=1e-6), name  # embeddings are float32
    assert metrics["view_pairs"] == {"insert": 5, "replace": 4, "crop": 4, "shuffle": 4}


def test_representations_name_the_final_view_and_each_pooled_hidden_layer():
    views = {name: np.full((2, 3), float(i)) for i, name in enumerate(
        ["interlocutor", "mean", "cls", "p1", "p2", "cls[-2]", "mean[-2]", "cls[-4]", "mean[-4]"])}
    as_view = representations(views, "cls", [-2, -4], hidden_state_pooling="view")
    assert {name: float(x[0, 0]) for name, x in as_view.items()} == {
        "embedding": 2.0, "hidden_state[-2]": 5.0, "hidden_state[-4]": 7.0}
    by_mean = representations(views, "cls", [-2])  # the released pooling of hidden states, the default
    assert {name: float(x[0, 0]) for name, x in by_mean.items()} == {"embedding": 2.0, "hidden_state[-2]": 6.0}
    assert list(representations(views, "mean", [])) == ["embedding"]


def _reference_states(model, inputs):
    """transformers' hidden states of the packed dialogues, and their [CLS] and masked means."""
    outputs = model(input_ids=inputs.ids, attention_mask=inputs.mask, token_type_ids=tf.zeros_like(inputs.ids),
                    output_hidden_states=True)
    mask = inputs.mask.numpy()[..., None].astype(np.float64)

    def pooled(layer):
        states = outputs.hidden_states[layer].numpy().astype(np.float64)
        return states[:, 0], (states * mask).sum(axis=1) / mask.sum(axis=1)

    return pooled


def test_hidden_layer_views_pool_that_layers_states(four_layer_bert, four_layer_state):
    pretrained = load_pretrained(four_layer_bert)
    embedder = DialogueEmbedder.from_pretrained(pretrained, hidden_layers=(-2, -4), max_length=24)
    assert embedder.names[-4:] == ["cls[-2]", "mean[-2]", "cls[-4]", "mean[-4]"]
    dialogues = [Dialogue("x", (Turn("a", "hello world"), Turn("b", "good morning how are you"))),
                 Dialogue("y", (Turn("a", "book a taxi"),))]
    views = embedder.embed(dialogues)
    turns = tf.ragged.constant([[t.text for t in d.turns] for d in dialogues], tf.string)
    speakers = tf.ragged.constant([role_ids(d) for d in dialogues], tf.int32)
    pooled = _reference_states(tiny_bert.transformers_model(four_layer_state, FOUR_LAYERS),
                               embedder.pack_batch(turns, speakers))
    for layer in (-1, -2, -4):
        cls, mean = pooled(layer)
        suffix = "" if layer == -1 else f"[{layer}]"
        np.testing.assert_allclose(views["cls" + suffix], cls, atol=2e-5, err_msg=f"cls{suffix}")
        np.testing.assert_allclose(views["mean" + suffix], mean, atol=2e-5, err_msg=f"mean{suffix}")
    assert not np.allclose(views["cls[-2]"], views["cls"], atol=1e-3)
    for bad in ((-5,), (0,)):
        with pytest.raises(ValueError, match="is not one of the encoder's 4 layers"):
            DialogueEmbedder.from_pretrained(pretrained, hidden_layers=bad)


def test_dialogues_over_the_token_bound_leave_their_source_out_of_the_join(tmp_path):
    """scatter-analysis.sh: filter_dataset_by_length.py on each embedded table, so a view too long
    takes its source out of the inner join. With the tiny vocabulary (one piece a word, "0" an
    unknown piece) "hello world" is [CLS] 0 hello world [SEP], 5 tokens, and its insert view 6."""
    from tfdialemb.data.length_filter import TokenLengthFilter
    from tfdialemb.encoders.checkpoint import vocab_file_tokenizer

    tiny_bert.write_vocab(tmp_path)
    dialogues = [Dialogue("s0", (Turn("a", "hello world"),), {"augmentations": []}),
                 Dialogue("s0/insert", (Turn("a", "hello the world"),), {"augmentations": ["insert"], "source_id": "s0"}),
                 Dialogue("s1", (Turn("a", "fine"),), {"augmentations": []}),
                 Dialogue("s1/insert", (Turn("a", "fine thanks"),), {"augmentations": ["insert"], "source_id": "s1"})]
    write_dialogues(dialogues, str(tmp_path / "views.jsonl"))
    length_filter = TokenLengthFilter(vocab_file_tokenizer(str(tmp_path / "vocab.txt")), max_dialogue_tokens=5)
    views = read_views(str(tmp_path / "views.jsonl"), length_filter)
    assert views.complete == ["s1"] and views.incomplete_sources == 1
    assert dict(length_filter.dropped) == {"over 5 tokens": 1}
    assert read_views(str(tmp_path / "views.jsonl")).complete == ["s0", "s1"]
