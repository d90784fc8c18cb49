"""The `dial2vec` builder and the dialogue_list record kind, through build and make_dataset."""
import os

import numpy as np
import pytest
import tensorflow as tf

import tiny_bert
from tfdialemb.data.build import BuildOptions, build
from tfdialemb.data.examples import ExampleBuilder, make_builder
from tfdialemb.data.pipeline import example_lengths, make_dataset
from tfdialemb.data.example_codec import parse_spec, serialize_example
from tfdialemb.data.records import DIALOGUE_LIST, read_manifest
from tfdialemb.data.sampling import DialoguePool
from tfdialemb.dialogue import Dialogue, Turn, write_dialogues
from tiny_corpus import TOKENIZER

W = tiny_bert.WORDS.index
OWN = ["hello", "how are you", "fine thanks", "book a taxi", "please help"]
OTHER_BY_ROLE = {0: ["good morning", "world", "do work"], 1: ["need hotel", "is not", "naive"],
                 2: ["the cafe", "resume"]}
OTHER = [text for texts in OTHER_BY_ROLE.values() for text in texts]


def _dialogue(speakers, texts=OWN, dialogue_id="d0"):
    return Dialogue(dialogue_id, tuple(Turn(s, t) for s, t in zip(speakers, texts)))


def _pool():
    """The dialogue's own utterances (index 0) and another dialogue's, by role id."""
    pool = DialoguePool(capacity=100, seed=0)
    pool.add(0, OWN, [0, 1, 0, 1, 0])
    pool.add(1, OTHER, [role for role, texts in OTHER_BY_ROLE.items() for _ in texts])
    return pool


def _examples(dialogue, seed=0, **params):
    builder = make_builder("dial2vec", params)
    return list(builder.examples(dialogue, 0, np.random.default_rng(seed), _pool()))


def _kept_roles(positive, negative):
    """Roles whose turns a negative keeps verbatim; checks the others come from other dialogues."""
    assert [r for r, _ in negative] == [r for r, _ in positive]
    kept = {r for (r, text), (_, own) in zip(negative, positive) if text == own}
    replaced = [text for (r, text) in negative if r not in kept]
    assert set(replaced) <= set(OTHER) and len(set(replaced)) == len(replaced)
    return kept


def test_fixed_keeps_the_second_speaker_as_the_released_code():
    examples = _examples(_dialogue("ababa"), negatives=4, negative_role="fixed")
    assert len(examples) == 1
    samples = examples[0]["samples"]
    positive = [(0, "hello"), (1, "how are you"), (0, "fine thanks"), (1, "book a taxi"), (0, "please help")]
    assert len(samples) == 5 and samples[0] == positive
    for negative in samples[1:]:
        assert _kept_roles(positive, negative) == {1}
        assert [text for r, text in negative if r == 1] == ["how are you", "book a taxi"]


def test_random_draws_the_kept_interlocutor_per_negative():
    samples = _examples(_dialogue("ababa"), negatives=12)[0]["samples"]
    kept = [_kept_roles(samples[0], negative) for negative in samples[1:]]
    assert all(len(k) == 1 for k in kept)
    assert {min(k) for k in kept} == {0, 1}
    assert _examples(_dialogue("ababa"), negatives=12)[0]["samples"] == samples  # seeded
    assert _examples(_dialogue("ababa"), seed=1, negatives=12)[0]["samples"] != samples


def test_three_speakers_fold_into_the_last_role_or_go_one_vs_rest():
    three = _dialogue("abcab")
    folded = _examples(three, negatives=3, negative_role="fixed")[0]["samples"]
    assert [r for r, _ in folded[0]] == [0, 1, 1, 0, 1]
    for negative in folded[1:]:
        assert _kept_roles(folded[0], negative) == {1}  # b and c kept, a replaced
    samples = _examples(three, negatives=12, max_roles=3)[0]["samples"]
    assert [r for r, _ in samples[0]] == [0, 1, 2, 0, 1]
    kept = [_kept_roles(samples[0], negative) for negative in samples[1:]]
    assert all(len(k) == 1 for k in kept) and set().union(*kept) == {0, 1, 2}
    for negative in _examples(three, negatives=3, max_roles=3, negative_role="fixed")[0]["samples"][1:]:
        assert _kept_roles(samples[0], negative) == {1}  # a and c replaced


def test_a_replaced_turn_is_filled_with_an_utterance_of_its_role_from_another_dialogue():
    """Paper Sec. 3.1: the turns of p2 are filled "with the utterances of p2"; the released
    generate_training.py fills role-"0" turns from its pool of role-"0" utterances."""
    for params in ({"negatives": 12}, {"negatives": 12, "max_roles": 3},
                   {"negatives": 6, "negative_role": "fixed"}):
        samples = _examples(_dialogue("abcab"), **params)[0]["samples"]
        for negative in samples[1:]:
            kept = _kept_roles(samples[0], negative)
            fillers = [(role, text) for role, text in negative if role not in kept]
            assert fillers and all(text in OTHER_BY_ROLE[role] for role, text in fillers), (params, negative)


def test_mixed_pool_fills_turns_with_utterances_of_any_role():
    samples = _examples(_dialogue("ababa"), negatives=12, negative_pool="mixed")[0]["samples"]
    role_of = {text: role for role, texts in OTHER_BY_ROLE.items() for text in texts}
    fillers = [(role, text) for negative in samples[1:]
               for (role, text), (_, own) in zip(negative, samples[0]) if text != own]
    assert any(role_of[text] != role for role, text in fillers)


def test_a_role_short_of_utterances_of_other_dialogues_stops_the_example_with_the_role_named():
    pool = DialoguePool(capacity=100, seed=0)
    pool.add(0, OWN, [0, 1, 2, 0, 1])
    pool.add(1, ["good morning", "world", "do work"], [0, 0, 1])  # no third speaker
    params = {"negatives": 3, "max_roles": 3, "negative_role": "fixed"}  # keeps role 1
    with pytest.raises(ValueError, match=r"with an utterance of role 2 .*negative_pool=mixed"):
        list(make_builder("dial2vec", params).examples(_dialogue("abcab"), 0, np.random.default_rng(0), pool))
    mixed = make_builder("dial2vec", {**params, "negative_pool": "mixed"})
    assert len(list(mixed.examples(_dialogue("abcab"), 0, np.random.default_rng(0), pool))) == 1


def test_one_speaker_dialogue_is_skipped():
    assert _examples(_dialogue("aaaaa")) == []


def test_parameter_errors():
    for params in ({"negatives": 0}, {"max_roles": 1}):
        with pytest.raises(ValueError, match="out of range"):
            make_builder("dial2vec", params)
    with pytest.raises(ValueError, match="negative_role must be one of"):
        make_builder("dial2vec", {"negative_role": "first"})
    with pytest.raises(ValueError, match="negative_pool must be one of"):
        make_builder("dial2vec", {"negative_pool": "role"})
    with pytest.raises(ValueError, match="has no parameters"):
        make_builder("dial2vec", {"window": 3})


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("dial2vec")
    dialogues = [
        _dialogue("ab", ["hello world", "how are you"], "d0"),
        _dialogue("aaa", ["the cafe", "need hotel", "book a taxi"], "mono"),
        _dialogue("abab", ["good morning", "fine", "please help", "thanks"], "d1"),
        _dialogue("ba", ["is not", "do work"], "d2"),
    ]
    write_dialogues(dialogues, str(root / "train.jsonl"))
    options = BuildOptions(max_length=9, num_shards=1, merge_consecutive_turns=False, min_turns=1)
    build(str(root / "train.jsonl"), str(root / "sep"), make_builder("dial2vec", {"negatives": 2}), TOKENIZER,
          options)
    build(str(root / "train.jsonl"), str(root / "eou"), make_builder("dial2vec", {"negatives": 2}), TOKENIZER,
          BuildOptions(max_length=9, num_shards=1, merge_consecutive_turns=False, min_turns=1,
                       dialogue_separator="[EOU]"))
    return root


BUILT_OTHERS = {
    0: {0: ["the cafe", "need hotel", "book a taxi", "good morning", "please help", "is not"],
        1: ["fine", "thanks", "do work"]},
    2: {0: ["hello world", "the cafe", "need hotel", "book a taxi", "good morning", "please help"],
        1: ["how are you", "fine", "thanks"]},
}
"""Per example of `built` that fits whole (d0, d2), per role id (first appearance), the utterances
of that role in the other dialogues, the one-speaker dialogue included."""


def _by_turn(ids, turns, roles, mask):
    """[(role, token ids)] per turn of one dense packed sample, separators included."""
    n = int(mask.sum())
    out = {}
    for token, turn, role in zip(ids[:n], turns[:n], roles[:n]):
        out.setdefault(int(turn), (int(role), []))[1].append(int(token))
    return [out[t] for t in sorted(out)]


def test_round_trip_gives_dense_samples_with_turn_and_role_ids(built):
    manifest = read_manifest(str(built / "sep"))
    assert manifest["counts"]["examples"] == 3  # the one-speaker dialogue is skipped
    assert manifest["dialogue_separator"] == "[SEP]"
    batch = next(iter(make_dataset(str(built / "sep"), batch_size=3, training=False)))
    ids, mask = batch["samples"].numpy(), batch["samples_mask"].numpy()
    turns, roles = batch["samples_turn_ids"].numpy(), batch["samples_role_ids"].numpy()
    assert ids.shape[:2] == (3, 3) and all(b.dtype == tf.int32 for b in batch.values())
    assert ids.shape[2] == mask.sum(-1).max() <= 9 == manifest["max_lengths"]["samples"]
    # d0 = [a: hello world, b: how are you]
    d0 = ["[CLS]", "hello", "world", "[SEP]", "how", "are", "you"]
    np.testing.assert_array_equal(ids[0, 0, :7], [W(w) for w in d0])
    np.testing.assert_array_equal(turns[0, 0, :7], [0, 0, 0, 0, 1, 1, 1])
    np.testing.assert_array_equal(roles[0, 0, :7], [0, 0, 0, 0, 1, 1, 1])
    assert not mask[0, 0, 7:].any() and not ids[0, 0, 7:].any()
    # d2 starts with its speaker "b", who is role 0 there (first appearance).
    np.testing.assert_array_equal(roles[2, 0, :6], [0, 0, 0, 0, 1, 1])
    # d1 = 11 tokens cut on the right to 9: [CLS] good morning [SEP] fine [SEP] please help [SEP].
    np.testing.assert_array_equal(turns[1, 0], [0, 0, 0, 0, 1, 1, 2, 2, 2])
    for example in range(3):
        positive = _by_turn(ids[example, 0], turns[example, 0], roles[example, 0], mask[example, 0])
        for s in (1, 2):
            negative = _by_turn(ids[example, s], turns[example, s], roles[example, s], mask[example, s])
            assert [r for r, _ in negative] == [r for r, _ in positive][:len(negative)]
            if example != 1:  # d0 and d2 fit whole: one interlocutor verbatim, the other replaced
                kept = {role for (role, tokens), (_, own) in zip(negative, positive) if tokens == own}
                assert len(negative) == len(positive) and len(kept) == 1
                for role, tokens in negative:  # by a same-role utterance of another dialogue
                    if role not in kept:
                        words = [t for t in tokens if t not in (W("[CLS]"), W("[SEP]"))]
                        assert words in [[W(w) for w in text.split()] for text in BUILT_OTHERS[example][role]]


def test_eou_build_and_example_length(built):
    eou = next(iter(make_dataset(str(built / "eou"), batch_size=3, training=False)))
    assert eou["samples"].numpy()[0, 0, 3] == W("[unused1]")
    manifest = read_manifest(str(built / "sep"))
    spec = parse_spec(manifest["builder"]["schema"])
    record = next(iter(tf.data.TFRecordDataset(os.path.join(str(built / "sep"), manifest["shards"][0]))))
    example = tf.io.parse_single_example(record, spec)
    assert sorted(example) == ["samples", "samples_role_ids", "samples_turn_ids"]
    lengths = example["samples"].row_lengths().numpy()
    batch = tf.io.parse_example(record[tf.newaxis], spec)
    assert example_lengths(batch, manifest["builder"]["schema"]).numpy()[0] == lengths.max() == 7


class _BadSamples(ExampleBuilder):
    """Yields the dialogue list given at construction, unregistered."""

    name = "bad_samples"
    schema = {"samples": DIALOGUE_LIST}

    def __init__(self, samples):
        super().__init__()
        self.samples = samples

    def examples(self, dialogue, index, rng, pool):
        yield {"samples": self.samples}


@pytest.mark.parametrize("samples, message", [
    ([[("a", "hello")]], r"turns must be \(role_id >= 0, text\) pairs"),
    ([[(-1, "hello")]], r"turns must be \(role_id >= 0, text\) pairs"),
    ([[(0, "hello")], []], "a dialogue sample has no turns"),
])
def test_bad_dialogue_samples_name_the_feature(tmp_path, samples, message):
    write_dialogues([_dialogue("ab", ["hello", "world"])], str(tmp_path / "d.jsonl"))
    with pytest.raises(ValueError, match=f"feature 'samples': {message}"):
        build(str(tmp_path / "d.jsonl"), str(tmp_path / "out"), _BadSamples(samples), TOKENIZER,
              BuildOptions(max_length=8, num_shards=1, min_turns=1))
    assert not os.path.exists(tmp_path / "out")
    with pytest.raises(ValueError, match="turn and role ids must be as long as the token ids"):
        serialize_example({"samples": [([2, 5], [0, 0], [0])]}, {"samples": DIALOGUE_LIST})
