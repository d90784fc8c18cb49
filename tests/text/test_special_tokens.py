import pytest

from tfdialemb.text import PROJECT_SPECIAL_TOKENS, map_special_tokens

VOCAB = ["[PAD]", "[unused2]", "[unused0]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[unused1]",
         "[EOT]"] + [f"[unused{i}]" for i in range(3, 9)] + ["hello"]


def test_existing_tokens_keep_their_entry_and_others_take_unused_in_numeric_order():
    mapping = map_special_tokens(VOCAB)
    assert mapping["[EOT]"] == "[EOT]"
    assert [mapping[t] for t in PROJECT_SPECIAL_TOKENS[1:]] == [
        "[unused0]", "[unused1]", "[unused2]", "[unused3]", "[unused4]", "[unused5]", "[unused6]"]


def test_override_takes_its_slot_out_of_the_free_list():
    mapping = map_special_tokens(VOCAB, {"[EOU]": "[unused1]"})
    assert mapping["[EOU]"] == "[unused1]"
    assert mapping["[B]"] == "[unused0]" and mapping["[A]"] == "[unused2]"
    assert len(set(mapping.values())) == len(mapping)


def test_bad_overrides_and_exhausted_slots():
    with pytest.raises(ValueError, match=r"unknown special tokens \['\[X\]'\]"):
        map_special_tokens(VOCAB, {"[X]": "[unused1]"})
    with pytest.raises(ValueError, match=r"'\[unused99\]' is not in the vocabulary"):
        map_special_tokens(VOCAB, {"[EOU]": "[unused99]"})
    with pytest.raises(ValueError, match=r"no free \[unusedN\] entries for \['\[O\]', '\[E\]'\]"):
        map_special_tokens(VOCAB[:-5])
