"""The demo-corpus generator: deterministic, canonical, balanced, varied, and its CLI."""
import collections
import os
import re
import subprocess
import sys

import pytest

from tfdialemb.demo.corpus import DOMAINS, generate, templates_for
from tfdialemb.dialogue import merge_consecutive_turns, read_dialogues, write_dialogues

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOMAIN_NAMES = {domain.name for domain in DOMAINS}


@pytest.fixture(scope="module")
def corpus():
    return list(generate(1000, seed=0))


def test_same_seed_gives_the_same_dialogues_and_another_seed_others():
    first = list(generate(200, seed=3))
    assert first == list(generate(200, seed=3))
    other = list(generate(200, seed=4))
    assert [d.to_json() for d in first] != [d.to_json() for d in other]


def test_a_shorter_corpus_is_a_prefix_of_a_longer_one():
    assert list(generate(50, seed=1)) == list(generate(120, seed=1))[:50]


def test_dialogues_pass_canonical_validation(tmp_path, corpus):
    path = str(tmp_path / "demo.jsonl")
    assert write_dialogues(corpus, path) == len(corpus)
    read_back = list(read_dialogues(path))
    assert [d.to_json() for d in read_back] == [d.to_json() for d in corpus]
    assert [d.id for d in corpus[:3]] == ["demo-000001", "demo-000002", "demo-000003"]
    assert all(re.fullmatch(r"demo-\d{6}", d.id) for d in corpus)


def test_every_domain_appears_in_400_dialogues_with_balanced_counts():
    counts = collections.Counter(d.labels["domain"] for d in generate(400, seed=7))
    assert len(DOMAIN_NAMES) >= 8
    assert set(counts) == DOMAIN_NAMES
    assert max(counts.values()) - min(counts.values()) <= 1


def test_turns_have_speakers_intents_and_filled_slots(corpus):
    for dialogue in corpus:
        assert dialogue.labels == {"domain": dialogue.labels["domain"]}
        for turn in dialogue.turns:
            assert turn.speaker in ("user", "agent")
            assert isinstance(turn.fields.get("intent"), str) and turn.fields["intent"]
            assert turn.text.strip() and "{" not in turn.text and "}" not in turn.text


def test_lengths_stay_within_4_to_14_and_vary(corpus):
    lengths = collections.Counter(len(d.turns) for d in corpus)
    assert min(lengths) >= 4 and max(lengths) <= 14
    assert len(lengths) >= 9


def test_user_utterances_are_varied(corpus):
    user_texts = [t.text for d in corpus for t in d.turns if t.speaker == "user"]
    assert len(set(user_texts)) >= 0.4 * len(user_texts)


def test_a_minority_of_user_turns_is_lower_case(corpus):
    user_texts = [t.text for d in corpus for t in d.turns if t.speaker == "user"]
    lower = sum(text == text.lower() for text in user_texts)
    assert 0.02 * len(user_texts) < lower < 0.25 * len(user_texts)


def test_every_intent_has_at_least_five_paraphrases(corpus):
    used = {(d.labels["domain"], t.fields["intent"]) for d in corpus for t in d.turns}
    assert all(len(templates_for(domain, intent)) >= 5 for domain, intent in used)


def test_domains_have_their_own_intents_and_share_the_common_ones(corpus):
    domains_of = collections.defaultdict(set)
    for dialogue in corpus:
        for turn in dialogue.turns:
            domains_of[turn.fields["intent"]].add(dialogue.labels["domain"])
    for intent in ("greet", "thank", "goodbye", "ask_more", "no_more"):
        assert domains_of[intent] == DOMAIN_NAMES, intent
    for intent in ("confirm", "deny", "ask_time", "ask_date", "inform_date", "ask_people",
                   "ask_name", "booking_done"):
        assert len(domains_of[intent]) >= 3, intent
    own = collections.Counter(next(iter(ds)) for ds in domains_of.values() if len(ds) == 1)
    assert all(own[name] >= 2 for name in DOMAIN_NAMES), own


def test_some_dialogues_have_consecutive_turns_of_one_speaker(corpus):
    merged = [merge_consecutive_turns(d) for d in corpus]
    shortened = sum(len(m.turns) < len(d.turns) for m, d in zip(merged, corpus))
    assert 0.05 * len(corpus) < shortened < 0.5 * len(corpus)


def test_negative_count_is_rejected():
    with pytest.raises(ValueError, match="num_dialogues"):
        list(generate(-1))


def test_cli_writes_the_corpus_and_prints_counts_per_domain(tmp_path):
    output = tmp_path / "out" / "demo.jsonl"
    result = subprocess.run(
        [sys.executable, "-m", "data_prep.make_demo_corpus", f"--output={output}",
         "--dialogues=24", "--seed=5"],
        capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    written = [d.to_json() for d in read_dialogues(str(output))]
    assert written == [d.to_json() for d in generate(24, seed=5)]
    assert f"wrote 24 dialogues to {output}" in result.stdout
    for name in DOMAIN_NAMES:
        assert f"  {name}: 3" in result.stdout
    assert [p.name for p in output.parent.iterdir()] == ["demo.jsonl"]
