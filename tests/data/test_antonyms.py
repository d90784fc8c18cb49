"""Opposite words (tfdialemb.data.antonyms): the negating-prefix rule, the listed opposites with
their inflections, and the file format, on hand-picked pairs."""
import pytest

from tfdialemb.data import antonyms


@pytest.mark.parametrize("word,other", [
    ("happy", "unhappy"), ("finish", "unfinished"), ("possible", "impossible"), ("agree", "disagree"),
    ("increase", "decreases"), ("yes", "nope"), ("cold", "warmer"), ("good", "bad"), ("best", "worst"),
    ("expensive", "cheap"), ("early", "later")])
def test_opposites_either_way_round(word, other):
    assert antonyms.are_opposites(word, other) and antonyms.are_opposites(other, word)


@pytest.mark.parametrize("word,other", [
    ("good", "excellent"), ("happy", "happier"), ("cheap", "inexpensive"), ("yes", "yeah"), ("increase", "raise"),
    ("cold", "chilly"), ("is", "this")])
def test_synonyms_and_inflections_are_not_opposites(word, other):
    assert not antonyms.are_opposites(word, other)


def test_neighbours_keep_their_order_less_the_opposites():
    assert antonyms.without_opposites("good", ["excellent", "bad", "great", "worse", "nice"]) == [
        "excellent", "great", "nice"]


def test_an_opposites_file_line_needs_two_sides(tmp_path):
    path = tmp_path / "opposites.txt"
    path.write_text("# comment\nbig large | small\n\nup down\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"opposites.txt:4: expected `words \| words`"):
        antonyms.read_opposites(str(path))
    path.write_text("big large | small  # sizes\n", encoding="utf-8")
    assert antonyms.read_opposites(str(path)) == [(frozenset({"big", "large"}), frozenset({"small"}))]
    assert antonyms.are_opposites("larger", "small", str(path))
