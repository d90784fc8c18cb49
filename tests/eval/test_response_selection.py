"""Response-selection metrics on hand-made blocks, against taesunwhang/UMS-ResSel's scorer
(models/utils/scorer.py) re-implemented here from its formulas, and the set reader."""
import json
import os

import numpy as np
import pytest

from tfdialemb.dialogue import DialogueFormatError
from tfdialemb.eval.response_selection import evaluate_pair_similarity, evaluate_response_selection, read_blocks

UBUNTU_TEST = os.path.join(os.path.dirname(os.path.dirname(__file__)), "converters", "fixtures", "ubuntu", "test.txt")


def _ums(blocks_scores, blocks_labels, k_list=(1, 2, 5)):
    """UMS-ResSel's totals divided by the blocks with a positive (their Douban evaluation)."""
    recall, mrr, p1, ap, examples = np.zeros(len(k_list)), 0.0, 0.0, 0.0, 0
    for scores, labels in zip(blocks_scores, blocks_labels):
        ranked = [label for _, label in sorted(zip(scores, labels), key=lambda x: x[0], reverse=True)]
        pos_index = [i for i, label in enumerate(ranked) if label == 1]
        if not pos_index:
            continue
        examples += 1
        recall += [np.mean([p + 1 <= k for p in pos_index]) for k in k_list]
        mrr += 1 / (pos_index[0] + 1)
        p1 += ranked[0] == 1
        ap += np.mean([(j + 1) / (p + 1) for j, p in enumerate(pos_index)])
    return {**{f"r10@{k}": r / examples for k, r in zip(k_list, recall)},
            "mrr": mrr / examples, "p@1": p1 / examples, "map": ap / examples}


BLOCKS = [
    # Ubuntu-like: the positive first, ranked third.
    ([0.6, 0.9, 0.1, 0.7, 0.2, 0.3, 0.05, 0.15, 0.25, 0.35], [1, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
    # Douban: three positives, ranked 1, 4 and 7.
    ([0.95, 0.9, 0.85, 0.8, 0.5, 0.45, 0.4, 0.3, 0.2, 0.1], [1, 0, 0, 1, 0, 0, 1, 0, 0, 0]),
    # Douban: no positive.
    ([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95], [0] * 10),
    # The positive on top.
    ([0.99, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05, 0.04, 0.03, 0.02], [1, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
]


def _write(tmp_path, blocks):
    path = tmp_path / "test.jsonl"
    lines, scores = [], {}
    for context_id, (block_scores, labels) in enumerate(blocks):
        context = [f"context {context_id} turn one", f"context {context_id} turn two"]
        for n, (score, label) in enumerate(zip(block_scores, labels)):
            response = f"candidate {context_id}-{n}"
            scores[(tuple(context), response)] = score
            lines.append(json.dumps({"id": f"test-{len(lines) + 1}",
                                     "turns": [{"speaker": "AB"[i % 2], "text": t}
                                               for i, t in enumerate(context + [response])],
                                     "labels": {"label": label, "context_id": context_id}}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path), lambda contexts, responses: np.array(
        [scores[(tuple(c), r)] for c, r in zip(contexts, responses)])


def test_metrics_equal_the_ums_resel_scorer_and_leave_empty_blocks_out(tmp_path):
    path, score = _write(tmp_path, BLOCKS)
    report = evaluate_response_selection(path, score)
    expected = _ums([b[0] for b in BLOCKS], [b[1] for b in BLOCKS])
    for name, value in expected.items():
        assert report[name] == pytest.approx(value), name
    assert report["blocks"] == 4 and report["empty_blocks"] == 1
    # Hand-worked: r10@1 = (0 + 1/3 + 1) / 3; r10@5 = (1 + 2/3 + 1) / 3; MAP block 2 = (1/1 + 2/4 + 3/7) / 3.
    assert report["r10@1"] == pytest.approx((0 + 1 / 3 + 1) / 3)
    assert report["r10@5"] == pytest.approx((1 + 2 / 3 + 1) / 3)
    assert report["map"] == pytest.approx((1 / 3 + (1 + 2 / 4 + 3 / 7) / 3 + 1) / 3)
    # r2@1 over the first two candidates: block 1 loses (0.6 < 0.9), block 4 wins, block 2's first
    # two are a positive and a negative (0.95 > 0.9): wins.
    assert report["r2@1"] == pytest.approx(2 / 3) and report["r2_blocks"] == 3


def test_kept_empty_blocks_count_as_zero(tmp_path):
    path, score = _write(tmp_path, BLOCKS)
    report = evaluate_response_selection(path, score, keep_empty_blocks=True)
    assert report["r10@1"] == pytest.approx((0 + 1 / 3 + 0 + 1) / 4)
    assert report["empty_blocks"] == 1 and report["empty_blocks_kept"] is True


def test_released_text_file_reads_into_blocks_by_position(tmp_path):
    raw = tmp_path / "test.txt"
    raw.write_text("1\thi\tthere\tyes\n0\thi\tthere\tno\n1\thi\tthere\tagain\n0\thi\tthere\tnope\n"
                   "0\tbye\tnow\tmaybe\n1\tbye\tnow\tsee you\n", encoding="utf-8")
    blocks = read_blocks(str(raw), block_size=2)
    assert [(b.context, b.candidates, b.labels) for b in blocks] == [
        (("hi", "there"), ("yes", "no"), (1, 0)), (("hi", "there"), ("again", "nope"), (1, 0)),
        (("bye", "now"), ("maybe", "see you"), (0, 1))]
    with pytest.raises(DialogueFormatError, match=r"test\.txt:1-10: the file ends after 6 line\(s\) of this block"):
        read_blocks(str(raw))


def test_twin_adjacent_ubuntu_contexts_are_scored_as_two_blocks_of_ten():
    """The fixture's first two blocks share a context; the positive scores 1, its negatives 0."""
    report = evaluate_response_selection(
        UBUNTU_TEST, lambda contexts, responses: np.array([1.0 if i % 10 == 0 else 0.0 for i in range(len(responses))]))
    assert (report["blocks"], report["scored_blocks"], report["block_sizes"]) == (3, 3, {"10": 3})
    assert report["r10@1"] == report["map"] == 1.0


def test_ties_rank_pessimistically_and_nan_is_a_miss(tmp_path):
    nan = np.nan
    blocks = [([0.5] * 10, [1] + [0] * 9),                           # all tied: the positive ranks 10th
              ([nan, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9], [1] + [0] * 9),   # NaN positive: 10th
              ([0.9, nan, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8], [1] + [0] * 9)]   # NaN negative above it: 2nd
    path, score = _write(tmp_path, blocks)
    report = evaluate_response_selection(path, score)
    assert report["r10@1"] == 0.0
    assert report["r10@2"] == pytest.approx(1 / 3) and report["r10@5"] == pytest.approx(1 / 3)
    assert report["mrr"] == pytest.approx((1 / 10 + 1 / 10 + 1 / 2) / 3) == report["map"]
    assert report["p@1"] == 0.0
    # r2@1: the first two candidates tie (block 1), a NaN positive (block 2), a NaN negative (block 3).
    assert report["r2@1"] == 0.0 and report["r2_blocks"] == 3


def test_single_candidate_blocks_are_refused_with_their_lines(tmp_path):
    path, score = _write(tmp_path, [([0.3], [1]), ([0.2, 0.1], [1, 0]), ([0.9], [1])])
    with pytest.raises(ValueError, match=r"2 of 3 blocks hold a single candidate \(line 1, line 4\), which has "
                                         r"nothing to be ranked against"):
        evaluate_response_selection(path, score)


def test_a_converted_file_keeps_its_blocks(tmp_path):
    path, _ = _write(tmp_path, BLOCKS[:2])
    with pytest.raises(ValueError, match="records its blocks in labels.context_id"):
        read_blocks(path, block_size=10)
    first = json.loads((tmp_path / "test.jsonl").read_text(encoding="utf-8").splitlines()[0])
    with open(path, "a", encoding="utf-8") as f:  # a 21st line back in block 0
        f.write(json.dumps({**first, "id": "test-21"}) + "\n")
    with pytest.raises(DialogueFormatError, match=r"test\.jsonl:21: context_id 0 was used by an earlier block"):
        read_blocks(path)


def test_a_set_without_positives_is_refused(tmp_path):
    path, score = _write(tmp_path, BLOCKS[2:3])
    for keep in (False, True):
        with pytest.raises(ValueError, match="no block has a positive"):
            evaluate_response_selection(path, score, keep_empty_blocks=keep)


def test_a_recall_cut_off_no_block_exceeds_is_null(tmp_path):
    """Blocks of 2 (a training file's layout): the positive is always in the top 2 and 5; a longer
    block without a positive, left out or scored 0, changes nothing."""
    path, score = _write(tmp_path, [([0.2, 0.9], [1, 0]), ([0.8, 0.1], [1, 0]), ([0.5] * 6, [0] * 6)])
    report = evaluate_response_selection(path, score)
    assert report["r10@1"] == report["p@1"] == report["r2@1"] == 0.5
    assert report["r10@2"] is None and report["r10@5"] is None
    assert report["map"] == report["mrr"] == pytest.approx((1 / 2 + 1) / 2)


def test_a_set_without_a_block_of_positives_and_negatives_is_refused(tmp_path):
    """All-positive blocks rank perfectly whatever the scores: MAP, MRR and P@1 would be 1."""
    path, score = _write(tmp_path, [([0.1, 0.9], [1, 1]), ([0.3, 0.2], [0, 0])])
    with pytest.raises(ValueError, match="no block holds both a positive and a negative candidate"):
        evaluate_response_selection(path, score)


def test_a_context_id_that_is_not_an_integer_or_string_names_its_line(tmp_path):
    path, _ = _write(tmp_path, BLOCKS[:1])
    lines = (tmp_path / "test.jsonl").read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    record["labels"]["context_id"] = [0]
    (tmp_path / "test.jsonl").write_text("\n".join([lines[0], json.dumps(record)] + lines[2:]) + "\n", encoding="utf-8")
    with pytest.raises(DialogueFormatError, match=r"test\.jsonl:2: a response-selection record .* `context_id` "
                                                  r"\(an integer or string\)"):
        read_blocks(path)


def test_pair_similarity_is_table_7s_two_averages_by_brute_force(tmp_path):
    blocks = [([0.0] * 3, [1, 0, 0]), ([0.0] * 2, [1, 0]), ([0.0] * 3, [0, 0, 1])]
    path, _ = _write(tmp_path, blocks)
    rng = np.random.default_rng(3)
    vectors = {view: rng.normal(size=(8, 4)) for view in ("cls", "projection")}  # pairs in file order
    report = evaluate_pair_similarity(path, lambda contexts, responses: vectors)
    labels = [label for _, block_labels in blocks for label in block_labels]
    starts = [0, 3, 5, 8]
    for view, raw in vectors.items():
        unit = raw / np.linalg.norm(raw, axis=1, keepdims=True)
        same = [unit[i] @ unit[j] for b in range(3) for i in range(starts[b], starts[b + 1])
                for j in range(i + 1, starts[b + 1])]
        cross = [unit[i] @ unit[j] for i in range(8) for j in range(8) if labels[i] == 1 and labels[j] == 0]
        assert report["views"][view]["ins_similarity"] == pytest.approx(np.mean(same))
        assert report["views"][view]["cat_similarity"] == pytest.approx(np.mean(cross))
    assert report["same_context_pairs"] == 3 + 1 + 3
    assert (report["positive_pairs"], report["negative_pairs"]) == (3, 5)


def _twenty_candidate_file(tmp_path):
    """Two contexts of 20 candidates each (the positive first), as build_selection_set
    --candidates=20 writes them in the released layout."""
    path = tmp_path / "twenty.txt"
    path.write_text("".join(f"{int(n == 0)}\t{context}\tturn\tcandidate {context} {n}\n"
                            for context in ("hi", "bye") for n in range(20)), encoding="utf-8")
    return str(path)


def test_a_file_of_longer_blocks_read_with_the_default_block_size_is_refused(tmp_path):
    """Cut into 10 lines, each context's second half is a block without a positive whose context
    is the block's before it: refused, naming --block_size, never scored as a Douban context
    without a positive (which the report would only count, with exit 0)."""
    path = _twenty_candidate_file(tmp_path)
    with pytest.raises(DialogueFormatError, match=r"twenty\.txt:11-20: no positive, and the context of the block "
                                                  r"before it: one context's candidates run on past "
                                                  r"--block_size=10 lines; pass the file's block size"):
        read_blocks(path)
    blocks = read_blocks(path, block_size=20)
    assert [(b.context, len(b.candidates), b.labels[:2]) for b in blocks] == [
        (("hi", "turn"), 20, (1, 0)), (("bye", "turn"), 20, (1, 0))]


def test_a_converted_file_whose_long_blocks_were_cut_is_refused(tmp_path):
    """A JSONL that an earlier conversion cut too short: context_id 1 repeats context 0 without a positive."""
    path, score = _write(tmp_path, [([0.9, 0.1], [1, 0]), ([0.5, 0.4], [0, 0]), ([0.3, 0.8], [0, 1])])
    lines = (tmp_path / "test.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    for record in records[2:4]:  # block 1 takes block 0's context
        record["turns"][:2] = records[0]["turns"][:2]
    (tmp_path / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    with pytest.raises(DialogueFormatError, match=r"test\.jsonl:3: context_id 1 has no positive and the context of "
                                                  r"context_id 0 before it"):
        evaluate_response_selection(path, lambda contexts, responses: np.zeros(len(responses)))
