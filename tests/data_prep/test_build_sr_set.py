"""Building an SR set with BM25 over intent-labelled utterances whose candidates are known."""
import subprocess
import sys

from data_prep.build_sr_set import bm25_tokens, build_sr_set, utterance_pool, write_sr_set
from tfdialemb.converters.dialoguecse_eval import FORMATS
from tfdialemb.dialogue import Dialogue, ErrorPolicy, Turn, write_dialogues
from tfdialemb.eval.semantic_retrieval import read_queries

# Candidates share a word with the query. Kept queries: the refund and ship ones. "hello" and
# "bye order" retrieve no same-intent utterance; the weather pair retrieves only each other.
POOL = [
    ("refund order", "refund"), ("refund please", "refund"), ("refund order now", "refund"),
    ("ship order", "ship"), ("ship please", "ship"), ("hello", "greet"), ("bye order", "bye"),
    ("weather today", "weather"), ("weather tomorrow", "weather"),
]
EXPECTED = {  # query: (positives, negatives) as sets; their order is the BM25 rank
    "refund order": ({"refund please", "refund order now"}, {"ship order", "bye order"}),
    "refund please": ({"refund order", "refund order now"}, {"ship please"}),
    "refund order now": ({"refund order", "refund please"}, {"ship order", "bye order"}),
    "ship order": ({"ship please"}, {"refund order", "refund order now", "bye order"}),
    "ship please": ({"ship order"}, {"refund please"}),
}


def _as_texts(lines):
    """{query text: (positive texts, negative texts)} of SR lines, ids resolved."""
    text_of = {line.id: line.text for line in lines}
    return {line.text: ([text_of[i] for i in line.positive_ids],
                        [text_of[i] for i in line.negative_ids])
            for line in lines if line.positive_ids}


def test_bm25_tokens_split_cjk_into_characters():
    assert bm25_tokens("Hello, World! 退款ab12 c_d") == ["hello", "world", "退", "款", "ab12", "c", "d"]


def test_pool_keeps_distinct_unambiguous_labelled_utterances():
    dialogues = [
        Dialogue("d1", (Turn("user", "refund  order", {"intent": "refund"}),
                        Turn("agent", "sure", {}),
                        Turn("user", "ok", {"intent": "confirm"}),
                        Turn("user", "??", {"intent": "confused"}))),
        Dialogue("d2", (Turn("user", "refund order", {"intent": "refund"}),
                        Turn("user", "ok", {"intent": "thanks"}),
                        Turn("user", "ship it", {"intent": ["ship"]}),
                        Turn("user", "ship order", {"intent": " ship "}))),
    ]
    pool, ambiguous = utterance_pool(dialogues)
    assert pool == [("refund order", "refund"), ("ship order", "ship")]
    assert ambiguous == 1
    joined = [Dialogue("d3", (Turn("agent", "hi , where to ?", {"intent": "request", "intent_acts": "greeting+request"}),))]
    assert utterance_pool(joined, intent_key="intent_acts") == ([("hi , where to ?", "greeting+request")], 0)


def test_candidates_labels_and_drops():
    lines, counts = build_sr_set(POOL, queries=100)
    assert {query: tuple(map(set, lists)) for query, lists in _as_texts(lines).items()} == EXPECTED
    assert counts == {"utterances": 9, "no_positives": 2, "no_negatives": 2, "queries": 5,
                      "lines": 6}
    assert sorted(line.text for line in lines if not line.positive_ids) == ["bye order"]
    assert [line.id for line in lines] == [str(i) for i in range(6)]


def test_rank_order_candidate_cap_and_positive_cap():
    # "refund order now" matches both words of "refund order"; "ship order" and "bye order" tie
    # on score and keep pool order.
    full = _as_texts(build_sr_set(POOL, queries=100)[0])["refund order"]
    assert full == (["refund order now", "refund please"], ["ship order", "bye order"])
    top3 = _as_texts(build_sr_set(POOL, queries=100, candidates=3)[0])["refund order"]
    assert top3 == (["refund order now", "refund please"], ["ship order"])
    capped = _as_texts(build_sr_set(POOL, queries=100, max_positives=1)[0])["refund order"]
    assert capped == (["refund order now"], ["ship order", "bye order"])


def test_seeded_query_sampling():
    chosen = {seed: sorted(_as_texts(build_sr_set(POOL, queries=2, seed=seed)[0]))
              for seed in range(6)}
    assert all(len(queries) == 2 and set(queries) <= set(EXPECTED) for queries in chosen.values())
    assert len({tuple(queries) for queries in chosen.values()}) > 1
    assert build_sr_set(POOL, queries=2, seed=3) == build_sr_set(POOL, queries=2, seed=3)


def test_chinese_utterances_match_by_character():
    pool = [("怎么申请退款", "退款"), ("退款多久到账", "退款"), ("申请发票", "发票")]
    lines, counts = build_sr_set(pool, queries=1, seed=0)
    assert counts["queries"] == 1
    assert _as_texts(lines) == {"怎么申请退款": (["退款多久到账"], ["申请发票"])}


def test_output_reads_back_through_the_converter_and_the_evaluator(tmp_path):
    lines, _ = build_sr_set(POOL, queries=100)
    path = str(tmp_path / "sr.txt")
    write_sr_set(lines, path)
    records = list(FORMATS["dialoguecse_sr"](path, ErrorPolicy("fail")))
    assert [(r.id, r.turns[0].text, r.labels["intent"]) for r in records] == [
        (line.id, line.text, line.intent) for line in lines]
    queries, skipped = read_queries(path)
    assert {q.text: (set(q.positives), set(q.negatives)) for q in queries} == EXPECTED
    assert skipped == 0


def _run(*args):
    return subprocess.run([sys.executable, "-m", "data_prep.build_sr_set", *args],
                          capture_output=True, text=True, timeout=300)


def test_command_line(tmp_path):
    dialogues = [Dialogue(f"d{i}", (Turn("user", text, {"intent": intent}),))
                 for i, (text, intent) in enumerate(POOL)]
    source = str(tmp_path / "dialogues.jsonl")
    write_dialogues(dialogues, source)
    output = tmp_path / "sr.txt"
    result = _run(f"--input={source}", f"--output={output}", "--queries=3", "--seed=1")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "wrote 3 queries" in result.stdout
    assert len(read_queries(str(output))[0]) == 3
    result = _run(f"--input={tmp_path}/none.jsonl", f"--output={tmp_path / 'other.txt'}")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: {tmp_path}/none.jsonl: input file does not exist")
