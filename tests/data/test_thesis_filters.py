"""The augmentation thesis' data filters, each on a hand-made file: DialogStudio's log-turn bound and
empty utterances, the utterance and dialogue token bounds of `data convert`, and the augcl
build's drop of an example whose original or a view is too long."""
import json

import pytest
from absl import flags

import tfdialemb.data.__main__ as data_cli
from tfdialemb.data.build import BuildOptions, build
from tfdialemb.data.examples import make_builder
from tfdialemb.dialogue import Dialogue, ErrorPolicy, Turn, read_dialogues, write_dialogues
from tfdialemb.encoders import load_tokenizer


def _entry(user, system):
    return {"turn id": 1, "user utterance": user, "system response": system, "dialog history": "",
            "original user side information": {}, "original system side information": {}, "dst": "",
            "dst accumulated": ""}


def _dialogstudio_file(folder, dialogues):
    """Collection X's train split holding `dialogues`, {key: log}."""
    folder = folder / "X" / "train"
    folder.mkdir(parents=True)
    (folder / "dialogues_1.json").write_text(json.dumps(
        {key: {"original dialog id": key, "new dialog id": key, "dialog index": 1, "original dialog info": {},
               "log": log} for key, log in dialogues.items()}), encoding="utf-8")
    return folder.parent


def _convert(*args):
    flags.FLAGS.unparse_flags()
    try:
        return data_cli.main(flags.FLAGS(["tfdialemb.data", "convert", *args]))
    finally:
        flags.FLAGS.unparse_flags()


def test_dialogstudio_log_turn_bound_and_empty_utterances(tmp_path, capsys):
    """11 log turns, 10 log turns, an empty utterance inside, one utterance only, an empty log; as
    source.py:50-80: two log entries left with one utterance kept, and a whitespace-only utterance
    kept by the released code (here its dialogue is kept without it)."""
    source = _dialogstudio_file(tmp_path, {
        "X--train--1": [_entry(f"hello {i}", f"fine {i}") for i in range(11)],
        "X--train--2": [_entry(f"hello {i}", f"fine {i}") for i in range(10)],
        "X--train--3": [_entry("hello", ""), _entry("", "how are you"), _entry("good", "")],
        "X--train--4": [_entry("hello", "")],
        "X--train--5": [],
        "X--train--6": [_entry("hi", ""), _entry("", "")],
        "X--train--7": [_entry(" ", "fine")],
        "X--train--8": [_entry(" ", "\t"), _entry("", "")],
    })
    out = tmp_path / "kept.jsonl"
    assert _convert("--format=dialogstudio", f"--input={source}", f"--output={out}", "--max_log_turns=10",
                    "--drop_empty_utterances") == 0
    kept = {d.id: [t.text for t in d.turns] for d in read_dialogues(str(out))}
    assert list(kept) == ["X--train--2", "X--train--3", "X--train--6", "X--train--7"]
    assert len(kept["X--train--2"]) == 20
    assert kept["X--train--3"] == ["hello", "how are you", "good"]  # the empty ones left out where they stood
    assert kept["X--train--6"] == ["hi"] and kept["X--train--7"] == ["fine"]
    assert capsys.readouterr().out.strip() == (
        f"wrote 4 dialogues to {out}; dropped 1 with over 10 log turns; dropped 1 with one log entry with an empty "
        "side; dropped 1 with an empty log; left out 1 whitespace-only utterances of kept dialogues (the released "
        "corpus keeps them as turns; the format has no blank turns); dropped 1 with only whitespace-only utterances "
        "(the released corpus keeps them; the format has no blank turns)")
    # Without the filters the empty utterances are bad records, and the long log is kept.
    assert _convert("--format=dialogstudio", f"--input={source}", f"--output={tmp_path / 'all.jsonl'}",
                    "--on_error=skip") == 0
    assert [d.id for d in read_dialogues(str(tmp_path / "all.jsonl"))] == ["X--train--1", "X--train--2",
                                                                            "X--train--4"]
    assert _convert("--format=sgd", f"--input={source}", f"--output={tmp_path / 'x.jsonl'}",
                    "--max_log_turns=10") == 2
    assert "--max_log_turns does not apply to --format=sgd" in capsys.readouterr().err


def test_utterance_and_dialogue_token_bounds(tmp_path, hf_safetensors_dir, capsys):
    """Counted with the tiny vocabulary, in which every word below is one piece. An utterance of
    n words is n + 2 tokens with [CLS] and [SEP]; a dialogue in the thesis' layout is
    2 + (turns − 1) + Σ (1 + words): "[CLS] 0 w.. [SEP] 1 w.. [SEP]"."""
    source = _dialogstudio_file(tmp_path, {
        "X--train--1": [_entry("hello world", "fine thanks")],  # 2 + 1 + 3 + 3 = 9
        "X--train--2": [_entry("hello world good morning how", "fine")],  # a 7-token turn; 2 + 1 + 6 + 2 = 11
        "X--train--3": [_entry("hello", "fine"), _entry("good", "")],  # 2 + 2 + 3 · 2 = 10
    })
    tokenizer = load_tokenizer(hf_safetensors_dir)
    assert [len(p) for p in tokenizer.tokenize(["hello world good morning how", "0", "1"]).to_list()] == [5, 1, 1]

    def kept(*bounds):
        out = tmp_path / f"out{len(list(tmp_path.iterdir()))}.jsonl"
        assert _convert("--format=dialogstudio", f"--input={source}", f"--output={out}",
                        f"--vocab_file={hf_safetensors_dir}/vocab.txt", *bounds) == 0
        return [int(d.id[-1]) for d in read_dialogues(str(out))]

    assert kept("--max_utterance_tokens=7") == [1, 2, 3]
    assert kept("--max_utterance_tokens=6") == [1, 3]
    assert "dropped 1 with an utterance over 6 tokens" in capsys.readouterr().out
    assert kept("--max_dialogue_tokens=10") == [1, 3]
    assert kept("--max_dialogue_tokens=9") == [1]
    assert "dropped 2 with over 9 tokens" in capsys.readouterr().out
    assert _convert("--format=dialogstudio", f"--input={source}", f"--output={tmp_path / 'y.jsonl'}",
                    "--max_dialogue_tokens=9") == 2
    assert "missing --vocab_file" in capsys.readouterr().err


def test_an_augcl_example_is_dropped_when_its_original_or_a_view_is_too_long(tmp_path, hf_safetensors_dir):
    """max_length 12: d0 (2 + 2 + 3 + 3 + 2 = 12 tokens in the thesis' layout) and its crop fit, d1's
    insert view (2 + 1 + 5 + 5 = 13) does not, so d1 and all its views go; without the option d1 is
    cut."""
    def line(id_, source, operations, *texts):
        return Dialogue(id_, tuple(Turn("ab"[i % 2], t) for i, t in enumerate(texts)),
                        {"source_id": source, "augmentations": operations})

    write_dialogues([line("d0", "d0", [], "hello world", "fine thanks", "good"),
                     line("d0/crop", "d0", ["crop"], "hello world", "fine thanks"),
                     line("d1", "d1", [], "hello world", "fine thanks"),
                     line("d1/insert", "d1", ["insert"], "hello the world the", "fine the thanks the")],
                    str(tmp_path / "augmented.jsonl"))
    tokenizer = load_tokenizer(hf_safetensors_dir)
    options = BuildOptions(max_length=12, num_shards=1, merge_consecutive_turns=False)
    dropping = build(str(tmp_path / "augmented.jsonl"), str(tmp_path / "drop"),
                     make_builder("augcl", {"drop_over_length": True}), tokenizer, options, ErrorPolicy("fail"))
    assert (dropping["counts"]["examples"], dropping["counts"]["dropped_over_length"]) == (1, 1)
    cutting = build(str(tmp_path / "augmented.jsonl"), str(tmp_path / "cut"), make_builder("augcl"), tokenizer,
                    options, ErrorPolicy("fail"))
    assert (cutting["counts"]["examples"], cutting["counts"]["dropped_over_length"]) == (2, 0)
    with pytest.raises(ValueError, match="2 examples were dropped for exceeding 9 tokens"):
        build(str(tmp_path / "augmented.jsonl"), str(tmp_path / "none"),
              make_builder("augcl", {"drop_over_length": True}), tokenizer,
              BuildOptions(max_length=9, num_shards=1, merge_consecutive_turns=False), ErrorPolicy("fail"))


@pytest.mark.parametrize("name", ["ubuntu", "douban", "dialoguecse_sts", "banking77"])
def test_token_bounds_are_refused_where_a_record_is_not_a_whole_dialogue(name, tmp_path, hf_safetensors_dir, capsys):
    """A block of two candidates, the first of which is long: dropping it alone would leave its block
    a single candidate (or, in Douban's human labels, no positive); a pair or query set would shrink."""
    source = tmp_path / "test.txt"
    source.write_text("1\thello\thello world good morning how are you today\n0\thello\tfine\n", encoding="utf-8")
    status = _convert(f"--format={name}", f"--input={source}", f"--output={tmp_path / 'out.jsonl'}",
                      f"--vocab_file={hf_safetensors_dir}/vocab.txt", "--max_utterance_tokens=6",
                      *(["--block_size=2"] if name in ("ubuntu", "douban") else []))
    assert status == 2
    assert capsys.readouterr().err.splitlines()[0] == (
        f"error: --max_utterance_tokens drops whole dialogues, but a --format={name} record is "
        + {"ubuntu": "one candidate of a context's block", "douban": "one candidate of a context's block",
           "dialoguecse_sts": "one scored sentence pair of the set",
           "banking77": "one query of the intent set"}[name] + ", which must not be left out alone")
    assert not (tmp_path / "out.jsonl").exists()
