"""Opposite words, kept out of the embedding-neighbour synonyms of FGC's response augmentation.

A word's nearest neighbours in an encoder's input embeddings include its opposites (all-MiniLM-L6-v2:
good→bad, yes→nope, happy→unhappy, cold→warm, correct→incorrect, increase→decrease), which
synonym replacement would turn into a response of the opposite meaning. Two words are opposites
here when
  - one is the other with a negating prefix (un-, in-, im-, il-, ir-, dis-, non-, mis-): happy /
    unhappy, finish / unfinished; or
  - they stand on the two sides of a line of `resources/antonyms.txt`, a short hand-written list
    of common English opposites, an inflected form (-s, -ed, -ing, -er, -est, -ly) counting as
    its base word: increase / decreases, yes / nope.
A word and an unrelated neighbour that a prefix happens to explain (cover / discover) is dropped
too; the loss is a neighbour, never a wrong replacement.
"""
import functools
from typing import Dict, FrozenSet, Iterable, List, Tuple

from tfdialemb.core.resources import resource_path

OPPOSITES_FILE = resource_path("antonyms.txt")
NEGATING_PREFIXES = ("un", "in", "im", "il", "ir", "dis", "non", "mis")
INFLECTIONS = ("s", "es", "ed", "d", "ing", "er", "r", "est", "st", "ly")
MIN_STEM = 3
"""Letters a word keeps once a prefix or an inflection is taken off (so `is` is not `i` + `s`)."""


@functools.lru_cache(maxsize=None)
def forms(word: str) -> FrozenSet[str]:
    """`word` and the base words its inflections may come from (`decreases` → decrease, decreas)."""
    word = word.lower()
    return frozenset([word] + [word[:-len(ending)] for ending in INFLECTIONS
                               if word.endswith(ending) and len(word) - len(ending) >= MIN_STEM])


def read_opposites(path: str = OPPOSITES_FILE) -> List[Tuple[FrozenSet[str], FrozenSet[str]]]:
    """The (side, side) word sets of an opposites file; ValueError naming a line without one `|`."""
    pairs = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            sides = line.split("|")
            if len(sides) != 2 or not all(side.split() for side in sides):
                raise ValueError(f"{path}:{number}: expected `words | words`, got {line!r}")
            pairs.append((frozenset(sides[0].lower().split()), frozenset(sides[1].lower().split())))
    return pairs


@functools.lru_cache(maxsize=4)
def _opposites_by_word(path: str) -> Dict[str, FrozenSet[str]]:
    """Each listed word → every word listed against it."""
    table: Dict[str, set] = {}
    for first, second in read_opposites(path):
        for side, other in ((first, second), (second, first)):
            for word in side:
                table.setdefault(word, set()).update(other)
    return {word: frozenset(others) for word, others in table.items()}


def are_opposites(word: str, other: str, path: str = OPPOSITES_FILE) -> bool:
    """Whether `other` is an opposite of `word` (see the module docstring)."""
    word_forms, other_forms = forms(word), forms(other)
    return bool(_negated(word) & other_forms or _negated(other) & word_forms
                or _listed_against(word, path) & other_forms)


def without_opposites(word: str, neighbours: Iterable[str], path: str = OPPOSITES_FILE) -> List[str]:
    """`neighbours` in order, less the opposites of `word`."""
    return [other for other in neighbours if not are_opposites(word, other, path)]


@functools.lru_cache(maxsize=None)
def _negated(word: str) -> FrozenSet[str]:
    """The forms of what follows a negating prefix of `word` (`unfinished` → finished, finish, ...)."""
    word = word.lower()
    return frozenset().union(*(forms(word[len(prefix):]) for prefix in NEGATING_PREFIXES
                               if word.startswith(prefix) and len(word) - len(prefix) >= MIN_STEM))


@functools.lru_cache(maxsize=None)
def _listed_against(word: str, path: str) -> FrozenSet[str]:
    """Every word the opposites file lists against a form of `word`."""
    table = _opposites_by_word(path)
    return frozenset().union(*(table.get(form, frozenset()) for form in forms(word)))
