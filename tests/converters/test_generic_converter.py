"""The generic converters (json, jsonl, yaml, text) against hand-made files in each layout: a
chatterbot-corpus folder (YAML: categories, conversations as lists of strings), a help-desk JSON
document with its own key names, JSON Lines mixing bare turn lists and objects, and plain text."""
import os

import pytest

from tfdialemb.converters import converter_options, converters
from tfdialemb.converters.generic import FORMATS
from tfdialemb.dialogue import Dialogue, DialogueFormatError, ErrorPolicy, Turn

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "generic")


def _alternating(dialogue_id, texts, **labels):
    return Dialogue(dialogue_id, tuple(Turn("AB"[i % 2], text) for i, text in enumerate(texts)), labels)


def test_a_chatterbot_folder_keeps_every_scalar_as_written_and_its_first_category():
    errors = ErrorPolicy("skip")
    folder = os.path.join(FIXTURES, "chatterbot")
    converted = list(FORMATS["yaml"](folder, errors, label_key="categories"))
    assert converted == [
        _alternating("ai-1", ["What is AI?", "The branch of science devoted to machines that think."], categories="AI"),
        _alternating("ai-2", ["Are you sentient?", "no"], categories="AI"),  # YAML's `no` is not False here
        _alternating("ai-3", ["What costs 1.50?", "A coffee.", "Thanks"], categories="AI"),
        _alternating("more/food-1", ["do you drink", "my brain does not require any beverages"], categories="food"),
    ]
    # The fourth conversation is one string (a quirk of chatterbot-corpus' trivia.yml): reported, not split.
    assert errors.messages == [f"{folder}/ai.yml:dialogue 4: the turns must be a list, got str"]


def test_a_json_document_with_its_own_keys():
    errors = ErrorPolicy("skip")
    path = os.path.join(FIXTURES, "support.json")
    converted = list(FORMATS["json"](path, errors, turns_key="utterances", text_key="says", speaker_key="who",
                                     id_key="session", label_key="topic, source,team"))
    assert converted == [
        Dialogue("s-7", (Turn("customer", "I was charged twice", {"intent": "complaint"}),
                         Turn("agent", "Sorry, I will refund one payment")),
                 {"topic": "refund", "source": "help desk", "team": "billing"}),
        Dialogue("s-8", (Turn("1", "is the shop open?"), Turn("2", "until nine")),
                 {"source": "help desk", "team": "billing"}),
    ]
    assert errors.messages == [f"{path}:dialogue 3: turn 1 has no 'who' while 1 other turn(s) have one"]
    with pytest.raises(DialogueFormatError, match=r"document: the document has no list under 'dialogues'"):
        list(FORMATS["json"](path, ErrorPolicy("fail"), dialogues_key="dialogues"))


def test_json_lines_take_bare_turn_lists_and_objects_and_report_bad_lines():
    errors = ErrorPolicy("skip")
    path = os.path.join(FIXTURES, "chats.jsonl")
    converted = list(FORMATS["jsonl"](path, errors, label_key="domain"))
    assert converted == [
        _alternating("chats-1", ["hi there", "hello, how can I help?"]),
        Dialogue("c2", (Turn("user", "book a taxi"), Turn("bot", "where to?")), {"domain": "taxi"}),
    ]
    assert [message.split(":", 1)[1] for message in errors.messages] == [
        "4: the turns must be a list, got str",
        "5: duplicate id 'c2'",
        "6: malformed JSON (Expecting ',' delimiter at column 59)",
        "7: turn 0 has empty text",
    ]


def test_plain_text_one_turn_a_line_blank_lines_between_dialogues():
    converted = list(FORMATS["text"](os.path.join(FIXTURES, "dialogues.txt"), ErrorPolicy("fail")))
    assert converted == [
        _alternating("dialogues-1", ["Good morning.", "Morning! What can I get you?", "A coffee, please."]),
        _alternating("dialogues-2", ["Is this seat free?", "Yes."]),
        _alternating("dialogues-3", ["One turn alone"]),
    ]


def test_plain_text_skips_a_dialogue_with_an_unreadable_line_whole(tmp_path):
    # Without its non-UTF-8 line, a dialogue's later turns would take the other speaker: each
    # dialogue holding one (in the middle, first, last, at the end of the file) is reported and
    # left out; a bad line alone between blank lines is its own record.
    path = tmp_path / "chats.txt"
    path.write_bytes(b"a1\na2\n\xff\na3\n\nb1\nb2\n\n\xfe\nc1\n\nd1\n\xfe\n\n\xfe\n\ne1\ne2\n\nf1\n\xfd")
    errors = ErrorPolicy("skip")
    assert list(FORMATS["text"](str(path), errors)) == [_alternating("chats-2", ["b1", "b2"]),
                                                        _alternating("chats-5", ["e1", "e2"])]
    skipped = "dialogue skipped: one of its lines is not UTF-8"
    assert [message.replace(f"{path}:", "") for message in errors.messages] == [
        "3: not UTF-8 (byte 0: b'\\xff')", f"1: {skipped}", "9: not UTF-8 (byte 0: b'\\xfe')", f"10: {skipped}",
        "13: not UTF-8 (byte 0: b'\\xfe')", f"12: {skipped}", "15: not UTF-8 (byte 0: b'\\xfe')",
        "21: not UTF-8 (byte 0: b'\\xfd')", f"20: {skipped}"]


def test_the_formats_are_registered_with_their_options():
    assert {"json", "jsonl", "yaml", "text"} <= set(converters())
    options = {name: [option.name for option in given] for name, given in converter_options().items()}
    assert options["yaml"] == ["text_key", "speaker_key", "label_key", "turns_key", "id_key", "dialogues_key"]
    assert options.get("text", []) == [] and options["ubuntu"] == ["block_size"]
    with pytest.raises(FileNotFoundError, match="holds no .jsonl file"):
        list(FORMATS["jsonl"](os.path.join(FIXTURES, "chatterbot"), ErrorPolicy("fail")))


def test_json_nested_deeper_than_the_decoder_follows_is_a_bad_file_or_line(tmp_path):
    """100,000 nested brackets exhaust Python's recursion limit: reported, not a RecursionError."""
    deep = "[" * 100_000 + "]" * 100_000
    (tmp_path / "deep.json").write_text(deep, encoding="utf-8")
    (tmp_path / "deep.jsonl").write_text('["hi", "ho"]\n' + deep + "\n", encoding="utf-8")
    errors = ErrorPolicy("skip")
    assert list(FORMATS["json"](str(tmp_path / "deep.json"), errors)) == []
    assert len(list(FORMATS["jsonl"](str(tmp_path / "deep.jsonl"), errors))) == 1
    assert errors.messages == [f"{tmp_path / 'deep.json'}:1: not JSON: JSON nested deeper than Python's decoder "
                               "can follow",
                               f"{tmp_path / 'deep.jsonl'}:2: JSON nested deeper than Python's decoder can follow"]
