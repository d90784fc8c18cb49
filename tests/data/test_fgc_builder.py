"""The `fgc` builder on a dialogue file and on the response-selection layout the `ubuntu` and
`douban` converters write (consecutive lines of one context share `labels.context_id`)."""
import numpy as np
import pytest

from tfdialemb.converters.native import alternate_speakers
from tfdialemb.converters.response_selection import convert_response_selection
from tfdialemb.data.build import BuildOptions, build
from tfdialemb.data.examples import make_builder
from tfdialemb.dialogue import Dialogue, ErrorPolicy, Turn, write_dialogues
from tiny_corpus import TOKENIZER, utterance_pool

OWN = ["hello", "how are you", "fine thanks", "book a taxi"]
OTHER = ["good morning", "need hotel", "the cafe"]


def _pool():
    return utterance_pool(OWN, OTHER)


def test_a_dialogue_gives_every_turn_as_the_positive_of_its_history():
    dialogue = Dialogue("d0", tuple(Turn("ab"[i % 2], text) for i, text in enumerate(OWN)))
    builder = make_builder("fgc", {"negatives": 2})
    examples = list(builder.examples(dialogue, 0, np.random.default_rng(0), _pool()))
    assert [(e["context"], e["positive"]) for e in examples] == [
        (["hello"], "how are you"), (["hello"], "how are you"),
        (["hello", "how are you"], "fine thanks"), (["hello", "how are you"], "fine thanks"),
        (["hello", "how are you", "fine thanks"], "book a taxi"),
        (["hello", "how are you", "fine thanks"], "book a taxi"),
    ]
    for first, second in zip(examples[::2], examples[1::2]):
        assert first["negative"] != second["negative"]
        assert {first["negative"], second["negative"]} <= set(OTHER)


def _selection_records(lines):
    """`label, turns..., response` lines as the converters' records: consecutive lines of one
    context share a context_id (blocks of any size, which the builder takes)."""
    records, contexts = [], []
    for number, (label, *texts) in enumerate(lines, start=1):
        if not contexts or contexts[-1] != texts[:-1]:
            contexts.append(texts[:-1])
        records.append(Dialogue(f"train-{number}", tuple(alternate_speakers(texts)),
                                {"label": int(label), "context_id": len(contexts) - 1}))
    return records


def test_selection_lines_pair_each_positive_with_its_contexts_negatives(tmp_path):
    dialogues = _selection_records([
        ("1", "hi", "hey there", "how are you"),
        ("0", "hi", "hey there", "the cafe"),
        ("0", "book", "which day", "need hotel"),      # a context without a positive: nothing
        ("1", "taxi", "where to", "the station"),      # a context without a negative: pool
        ("1", "bye", "see you", "take care"),
        ("1", "bye", "see you", "good night"),
        ("0", "bye", "see you", "blue sky"),
    ])
    builder = make_builder("fgc", {"negatives": 1})
    rng = np.random.default_rng(0)
    examples = []
    for index, dialogue in enumerate(dialogues):
        examples += builder.examples(dialogue, index, rng, _pool())
    examples += builder.finish(rng, _pool())
    assert [(e["context"], e["positive"], e["negative"]) for e in examples if e["context"][0] != "taxi"] == [
        (["hi", "hey there"], "how are you", "the cafe"),
        (["bye", "see you"], "take care", "blue sky"),
        (["bye", "see you"], "good night", "blue sky"),
    ]
    pooled = [e for e in examples if e["context"][0] == "taxi"]
    assert len(pooled) == 1 and pooled[0]["positive"] == "the station"
    assert pooled[0]["negative"] in OWN + OTHER


def test_a_file_mixing_both_kinds_is_refused(tmp_path):
    dialogues = _selection_records([("1", "hi", "hey there", "how are you")])
    builder = make_builder("fgc")
    rng = np.random.default_rng(0)
    list(builder.examples(dialogues[0], 0, rng, _pool()))
    plain = Dialogue("d1", (Turn("a", "x"), Turn("b", "y")))
    with pytest.raises(ValueError, match="either all response-selection lines or all dialogues"):
        list(builder.examples(plain, 1, rng, _pool()))


def test_the_build_flushes_the_last_context(tmp_path):
    raw = tmp_path / "train.txt"  # the released training layout: a positive and a negative per context
    raw.write_text("1\thi\they there\thow are you\n0\thi\they there\tthe cafe\n"
                   "1\tbye\tsee you\ttake care\n0\tbye\tsee you\tblue sky\n", encoding="utf-8")
    dialogues = list(convert_response_selection(str(raw), ErrorPolicy("fail"), block_size=2))
    path = tmp_path / "train.jsonl"
    write_dialogues(dialogues, str(path))
    manifest = build(str(path), str(tmp_path / "built"), make_builder("fgc"), TOKENIZER,
                     BuildOptions(max_length=16, num_shards=1))
    assert manifest["counts"]["examples"] == 2


def test_jieba_words_store_a_chinese_response_as_word_rows():
    dialogue = Dialogue("d0", (Turn("a", "你好"), Turn("b", "我想订一张去北京的机票，谢谢")))
    builder = make_builder("fgc", {"words": "jieba"})
    assert builder.schema["positive"] == "sequence_list"
    example = next(builder.examples(dialogue, 0, np.random.default_rng(0), _pool()))
    assert example["positive"] == ["我想订", "一张", "去", "北京", "的", "机票", "，", "谢谢"]
    assert example["context"] == ["你好"]
    assert isinstance(example["negative"], list) and "".join(example["negative"]).replace(" ", "") in \
        [t.replace(" ", "") for t in OWN + OTHER]
