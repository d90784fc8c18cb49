"""The `ccl` and `c3l` builders (triple-encoders; Justus-Jonas/imaginaryNLP imaginaryNLP/trainer.py,
UKPLab/acl2024-triple-encoders triple_encoders/trainer.py) and the "float" kind."""
import numpy as np
import pytest
import tensorflow as tf

from tfdialemb.data.build import BuildOptions, build
from tfdialemb.data.examples import make_builder
from tfdialemb.data.examples.curved import c3l_target
from tfdialemb.data.pipeline import make_dataset, to_dense
from tfdialemb.data.example_codec import parse_spec, serialize_example
from tfdialemb.data.records import FLOAT, SEQUENCE, read_manifest
from tfdialemb.data.sampling import DialoguePool
from tfdialemb.dialogue import Dialogue, Turn, write_dialogues
from tiny_corpus import TOKENIZER, packed_ids

# u0 .. u6
OWN = ["hello", "how are you", "fine thanks", "good morning", "book a taxi", "need hotel",
       "please help"]
OTHER = ["the cafe", "hello world", "need help", "is not", "to do", "good cafe"]


def _dialogue(texts, name="d0"):
    return Dialogue(name, tuple(Turn("ab"[i % 2], t) for i, t in enumerate(texts)))


def _pool():
    pool = DialoguePool(capacity=100, seed=0)
    pool.add(0, OWN)
    pool.add(1, OTHER)
    return pool


def _examples(name, params=None, texts=OWN, seed=0):
    """The builder's examples; the released code's windows (no final one) unless params say."""
    builder = make_builder(name, {"last_window": False, **(params or {})})
    return list(builder.examples(_dialogue(texts), 0, np.random.default_rng(seed), _pool()))


def _strip(text, space):
    """The utterance of a before-space text "[Bx] [S] [B] u", checking its prefix."""
    prefix = f"{space} " if space else ""
    assert text.startswith(prefix) and text[len(prefix):len(prefix) + 8] in ("[O] [B] ", "[E] [B] ")
    return text[len(prefix) + 8:]


def test_ccl_windows_and_counts():
    # 7 utterances, l = 5: windows start at 0 and 1 (the released code skips s = 2); 12 pairs each.
    assert len(_examples("ccl")) == 2 * 12
    assert len(_examples("ccl", {"last_window": True})) == 3 * 12
    assert _examples("ccl", texts=OWN[:5]) == []
    assert len(_examples("ccl", {"last_window": "true"}, texts=OWN[:5])) == 12
    assert len(_examples("ccl", {"window": 3})) == 4 * 6


def test_ccl_positives_targets_and_speaker_tokens():
    examples = _examples("ccl")
    for start, window in ((0, examples[:12]), (1, examples[12:])):
        u = OWN[start:start + 5]
        assert [(e["before"], e["after"]) for e in window[:4]] == [
            (f"[O] [B] {u[0]}", f"[A] {u[1]}"),
            (f"[E] [B] {u[0]}", f"[A] {u[2]}"),
            (f"[O] [B] {u[0]}", f"[A] {u[3]}"),
            (f"[E] [B] {u[0]}", f"[A] {u[4]}"),
        ]
        assert [e["target"] for e in window[:4]] == pytest.approx([0.8, 0.6, 0.4, 0.2])
    # B.3 of the notes: ("[O] [BEFORE] how are you ?", "[AFTER] fine , thanks .") is 0.8.
    assert (examples[12]["before"], examples[12]["after"]) == ("[O] [B] how are you",
                                                               "[A] fine thanks")
    assert [e["target"] for e in _examples("ccl", {"window": 4})[:3]] == pytest.approx(
        [0.75, 0.5, 0.25])


def test_ccl_directional_and_random_negatives():
    examples = _examples("ccl", {"last_window": True})
    sides = set()
    for start in range(3):
        u = OWN[start:start + 5]
        negatives = examples[12 * start + 4:12 * start + 12]
        assert all(e["target"] == 0.0 for e in negatives)
        directional, random = negatives[0::2], negatives[1::2]
        assert [(e["before"], e["after"]) for e in directional] == [
            (f"[O] [B] {u[1]}", f"[A] {u[0]}"),
            (f"[E] [B] {u[2]}", f"[A] {u[0]}"),
            (f"[O] [B] {u[3]}", f"[A] {u[0]}"),
            (f"[E] [B] {u[4]}", f"[A] {u[0]}"),
        ]
        for d, e in enumerate(random, start=1):
            before, after = _strip(e["before"], ""), e["after"][len("[A] "):]
            assert e["after"].startswith("[A] ")
            if before == u[d]:
                assert after in OTHER
            else:
                assert before in OTHER and after == u[d]
            sides.add((before == u[d], e["before"][:3]))
    # Both sides and both speaker tokens are drawn.
    assert sides == {(True, "[O]"), (True, "[E]"), (False, "[O]"), (False, "[E]")}


C3L_PAPER = [7 / 15, 0.6, 11 / 15, 11 / 15, 13 / 15, 1.0]
C3L_RELEASED = [0.2, 0.4, 0.6, 0.6, 0.8, 1.0]


def test_c3l_label_tables():
    pairs = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    assert [c3l_target(i, j, 4, 5) for i, j in pairs] == pytest.approx(C3L_PAPER)
    assert [c3l_target(i, j, 4, 5, "released") for i, j in pairs] == pytest.approx(C3L_RELEASED)
    assert [c3l_target(i, j, 3, 4) for i, j in [(0, 1), (0, 2), (1, 2)]] == pytest.approx(
        [0.625, 0.8125, 1.0])
    assert [c3l_target(i, j, 3, 4, "released") for i, j in [(0, 1), (0, 2), (1, 2)]] == (
        pytest.approx([0.2, 0.6, 1.0]))


def test_c3l_counts_positives_and_speaker_tokens():
    # 6 positives + 3 negatives for each of the 4 contexts = 18 per window.
    assert len(_examples("c3l")) == 2 * 18
    assert len(_examples("c3l", {"last_window": True})) == 3 * 18
    assert _examples("c3l", texts=OWN[:5]) == []
    assert len(_examples("c3l", {"window": 4})) == 3 * (3 + 9)
    for labels, table in (("paper", C3L_PAPER), ("released", C3L_RELEASED)):
        examples = _examples("c3l", {"labels": labels})
        for start in (0, 1):
            u = OWN[start:start + 5]
            positives = examples[18 * start:18 * start + 6]
            # The speaker token is [O] at odd distance to u4 (u1, u3), [E] at even (u0, u2).
            assert [(e["b1"], e["b2"], e["after"]) for e in positives] == [
                (f"[B1] [E] [B] {u[0]}", f"[B2] [O] [B] {u[1]}", f"[A] {u[4]}"),
                (f"[B1] [E] [B] {u[0]}", f"[B2] [E] [B] {u[2]}", f"[A] {u[4]}"),
                (f"[B1] [E] [B] {u[0]}", f"[B2] [O] [B] {u[3]}", f"[A] {u[4]}"),
                (f"[B1] [O] [B] {u[1]}", f"[B2] [E] [B] {u[2]}", f"[A] {u[4]}"),
                (f"[B1] [O] [B] {u[1]}", f"[B2] [O] [B] {u[3]}", f"[A] {u[4]}"),
                (f"[B1] [E] [B] {u[2]}", f"[B2] [O] [B] {u[3]}", f"[A] {u[4]}"),
            ]
            assert [e["target"] for e in positives] == pytest.approx(table)
    window4 = _examples("c3l", {"window": 4})[:3]
    assert [(e["b1"][:8], e["b2"][:8]) for e in window4] == [
        ("[B1] [O]", "[B2] [E]"), ("[B1] [O]", "[B2] [O]"), ("[B1] [E]", "[B2] [O]")]


def test_c3l_hard_positives_ablation_changes_only_the_positive_targets():
    """Triple-encoders Table 4, "hard positives / no curvature": the same triples and negatives,
    every positive regressed onto 1 instead of Eq. 1's curve."""
    for labels in ("paper", "released"):
        curved = _examples("c3l", {"labels": labels})
        hard = _examples("c3l", {"labels": labels, "positives": "hard"})
        assert [{**e, "target": None} for e in hard] == [{**e, "target": None} for e in curved]
        for start in (0, 1):
            assert [e["target"] for e in hard[18 * start:18 * start + 18]] == [1.0] * 6 + [0.0] * 12
    with pytest.raises(ValueError, match="positives must be one of"):
        make_builder("c3l", {"positives": "uniform"})


def test_c3l_hard_negatives_of_eq2():
    examples = _examples("c3l", {"last_window": True})
    shared_speakers = set()
    for start in range(3):
        u = OWN[start:start + 5]
        negatives = examples[18 * start + 6:18 * start + 18]
        assert all(e["target"] == 0.0 and e["after"] == f"[A] {u[4]}" for e in negatives)
        for c in range(4):
            own = "[O]" if (4 - c) % 2 else "[E]"
            first, second, both = negatives[3 * c:3 * c + 3]
            assert first["b1"] == f"[B1] {own} [B] {u[c]}"
            assert second["b2"] == f"[B2] {own} [B] {u[c]}"
            randoms = [_strip(first["b2"], "[B2]"), _strip(second["b1"], "[B1]"),
                       _strip(both["b1"], "[B1]"), _strip(both["b2"], "[B2]")]
            assert set(randoms) <= set(OTHER) and len(set(randoms)) == 4
            assert first["b2"][5:8] == second["b1"][5:8]
            shared_speakers.add(first["b2"][5:8])
    assert shared_speakers == {"[O]", "[E]"}


def test_speaker_tokens_off_and_reproducibility():
    ccl = _examples("ccl", {"speaker_tokens": False})
    assert (ccl[0]["before"], ccl[4]["before"]) == ("[B] hello", "[B] how are you")
    c3l = _examples("c3l", {"speaker_tokens": "false"})
    assert (c3l[0]["b1"], c3l[0]["b2"]) == ("[B1] [B] hello", "[B2] [B] how are you")
    assert _examples("c3l", seed=5) == _examples("c3l", seed=5)
    assert _examples("ccl", seed=5) != _examples("ccl", seed=6)


def test_parameter_errors():
    with pytest.raises(ValueError, match="out of range"):
        make_builder("ccl", {"window": 1})
    with pytest.raises(ValueError, match="out of range"):
        make_builder("c3l", {"window": 2})
    with pytest.raises(ValueError, match="labels must be one of"):
        make_builder("c3l", {"labels": "code"})
    with pytest.raises(ValueError, match="needs window >= 4"):
        make_builder("c3l", {"labels": "released", "window": 3})
    with pytest.raises(ValueError, match="has no parameters"):
        make_builder("ccl", {"labels": "paper"})


def test_float_kind_round_trip():
    schema = {"ids": SEQUENCE, "target": FLOAT}
    records = [serialize_example({"ids": [2, 5, 3], "target": t}, schema) for t in (0.8, 0.0)]
    parsed = tf.io.parse_example(tf.constant(records), parse_spec(schema))
    dense = to_dense(parsed, schema)
    assert dense["target"].dtype == tf.float32
    assert dense["target"].numpy().tolist() == pytest.approx([0.8, 0.0])


@pytest.mark.parametrize("name,texts", [("ccl", ("before", "after")),
                                        ("c3l", ("b1", "b2", "after"))])
def test_build_and_make_dataset(tmp_path, name, texts):
    path = str(tmp_path / "train.jsonl")
    write_dialogues([_dialogue(OWN), _dialogue(OTHER, "d1")], path)
    options = BuildOptions(max_length=16, num_shards=2, merge_consecutive_turns=False, min_turns=1)
    builder = make_builder(name)
    build(path, str(tmp_path / name), builder, TOKENIZER, options)
    assert read_manifest(str(tmp_path / name))["builder"]["schema"]["target"] == FLOAT
    # The build's pool holds OWN then OTHER; dialogue i draws from default_rng([seed, i]). With
    # every window (the default) OWN (7 utterances) has 3, OTHER (6 utterances) 2.
    expected = [e for i, texts_i in enumerate((OWN, OTHER))
                for e in builder.examples(_dialogue(texts_i), i, np.random.default_rng([0, i]),
                                          _pool())]
    assert len(expected) == 5 * {"ccl": 12, "c3l": 18}[name]
    expected = sorted((*(tuple(packed_ids(e[k], 16)) for k in texts), e["target"])
                      for e in expected)
    rows = []
    for batch in make_dataset(str(tmp_path / name), batch_size=5, training=False):
        assert batch["target"].dtype == tf.float32
        for b in range(batch["target"].shape[0]):
            ids = [tuple(int(t) for t, m in zip(batch[k][b].numpy(), batch[f"{k}_mask"][b].numpy())
                         if m) for k in texts]
            rows.append((*ids, float(batch["target"][b])))
    rows.sort()
    assert [r[:-1] for r in rows] == [e[:-1] for e in expected]
    assert [r[-1] for r in rows] == pytest.approx([e[-1] for e in expected], abs=1e-6)
    # Special tokens are single ids: [CLS] [O]/[E] or [B1] ... for the first text, [CLS] [A] ...
    first = {"ccl": ("[O]", "[E]"), "c3l": ("[B1]",)}[name]
    assert {r[0][1] for r in rows} == {TOKENIZER.token_id(t) for t in first}
    assert {r[-2][1] for r in rows} == {TOKENIZER.token_id("[A]")}


def test_default_windows_include_the_final_one():
    builder = make_builder("ccl")
    assert builder.params.last_window is True
    assert len(list(builder.examples(_dialogue(OWN), 0, np.random.default_rng(0), _pool()))) == 3 * 12
