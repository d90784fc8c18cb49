"""What token insertion and token replacement share (thesis Sec. 4.1: replacement "is identical to
insertion, except that existing tokens are masked instead of new masks being added"): marking
places in each utterance, asking the fill-mask model for them with neighbouring utterances as
context, and writing accepted fills back into the original text.

Utterances with marked places become model inputs, their places as [MASK] tokens, turns joined by
[SEP] (as the dialogue-level MLM pre-training of this project and the released dialogue encoder
join them). How the utterances are grouped (`fill_context`):
- `pairs` (default, the released code: mylib/datamakers/augmentations.py:20, 27 build both
  operations with fill_utterance_level=2, and mylib/augmentations/insert.py:255
  `_fill_masks_context_level` cuts a dialogue into consecutive pairs (u1, u2), (u3, u4), …):
  one input per pair, `[CLS] masked u1 [SEP] masked u2 [SEP]`, the masks of both filled together;
- `window`: one input per utterance, `[CLS] u_{i-c} [SEP] … masked u_i [SEP] … u_{i+c} [SEP]`, its
  `context_utterances` = c neighbours on each side unmasked, so every utterance sees the same kind
  of context and no fill depends on another utterance's masks.
An input longer than `max_length` keeps its masked utterances whole (cut at their end when they
alone are too long; places cut off stay as they were) and the context tokens nearest to them.

At each place the model's `fill_candidates` most probable tokens (released: the pipeline's
top_k=100, insert.py:301 `_to_mlm`) are scanned in order of probability for the first top-k
acceptable ones (released `_choose_confident`, insert.py:133-151); a candidate is rejected when it
is a sub-word piece (## in WordPiece), not a word of letters (punctuation, digits, special tokens:
the released `_is_not_forbidden`, insert.py:126-131, keeps `str.isalpha()` tokens), a stop word
(`fill_stop_words`: by default nltk's English list, which insert.py:64-66 downloads, shipped here
as resources/nltk_english_stopwords.txt), or less probable than the operation's threshold
(insertion 0.005, replacement 0 as released). Scanning matters: at an inserted gap the few most
probable tokens are often stop words or punctuation, and a word further down is taken. One of the
kept ones is drawn with probability proportional to its score (released `_replace_masks`); with
none the place stays as it was. A dialogue none of whose places got a fill is returned as None
(the operation did not apply).

Not copied: the released filter reads the pipeline's `token_str` (insert.py:143), which for the
RoBERTa it ran is the decoded token, " word" with its leading space for a whole word and "word"
for a piece inside one, so `str.isalpha()` (insert.py:130) rejects every whole word and keeps
sub-word pieces, the reverse of its intent (docs/methods/augcl.md, "Released code not copied"); here the WordPiece
vocabulary marks pieces by "##", and whole words are what is kept.
"""
import dataclasses
import math
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from tfdialemb.augment.base import Augmentation, with_texts
from tfdialemb.dialogue import Dialogue
from tfdialemb.core.options import Option
from tfdialemb.text.stop_words import nltk_english_stop_words, sklearn_english_stop_words

PAIRS, WINDOW = "pairs", "window"
FILL_CONTEXTS = (PAIRS, WINDOW)
NLTK_ENGLISH, SKLEARN_ENGLISH, NO_STOP_WORDS = "nltk_english", "sklearn_english", "none"
STOP_WORD_LISTS = (NLTK_ENGLISH, SKLEARN_ENGLISH, NO_STOP_WORDS)
FILL_CONTEXT = Option("fill_context", PAIRS, "What the fill-mask model sees: pairs (released, "
                      "fill_utterance_level=2): consecutive utterances (u1, u2), (u3, u4), ... in one input, the "
                      "masks of both filled together; window: each masked utterance alone between "
                      "--context_utterances unmasked neighbours on each side.", choices=FILL_CONTEXTS)
CONTEXT_UTTERANCES = Option("context_utterances", 1, "--fill_context=window: neighbouring utterances on "
                            "each side given to the fill-mask model with the masked one.", lower_bound=0)
FILL_STOP_WORDS = Option("fill_stop_words", NLTK_ENGLISH, "Stop words never masked by replacement nor "
                         "accepted as fills: nltk_english (nltk's 179 words, the released code's), "
                         "sklearn_english (scikit-learn's 318) or none.", choices=STOP_WORD_LISTS)
FILL_CANDIDATES = Option("fill_candidates", 100, "Fill-mask predictions scanned, most probable first, for "
                         "the first top-k acceptable fills (released code: the fill-mask pipeline's "
                         "top_k=100; capped by the vocabulary).", lower_bound=1)
FILL_BATCH_SIZE = Option("fill_batch_size", 64, "Model inputs per fill-mask model call.", lower_bound=1)
FILL_MAX_LENGTH = Option("fill_max_length", 256, "Tokens per fill-mask model input (capped by the model's "
                         "positions); context beyond is cut.", lower_bound=8)
FILL_OPTIONS = (FILL_CONTEXT, CONTEXT_UTTERANCES, FILL_STOP_WORDS, FILL_CANDIDATES, FILL_BATCH_SIZE,
                FILL_MAX_LENGTH)
"""The flags both token operations share (each has its own probability threshold)."""


@dataclasses.dataclass(frozen=True)
class Place:
    """A character span of an utterance that one fill takes the place of (empty: an insertion)."""

    start: int
    end: int


def sample_size(count: int, rate: float) -> int:
    """ceil(count · rate), as the released `_insert` sizes its masks (rounded first, so that e.g.
    10 · 0.3 asks for 3, not 4)."""
    return min(count, math.ceil(round(count * rate, 9)))


def stop_words(name: str) -> frozenset:
    """The stop-word list `FILL_STOP_WORDS` names."""
    if name == NO_STOP_WORDS:
        return frozenset()
    if name == NLTK_ENGLISH:
        return nltk_english_stop_words()
    if name == SKLEARN_ENGLISH:
        return sklearn_english_stop_words()
    raise ValueError(f"fill_stop_words must be one of {STOP_WORD_LISTS}, got {name!r}")


@dataclasses.dataclass(frozen=True)
class _Unit:
    """One model input: utterances [first, end) of a dialogue, those in [masked_first, masked_end)
    with their places masked, the others unmasked context."""

    first: int
    masked_first: int
    masked_end: int
    end: int


class MaskFilling(Augmentation):
    """Base of the two token operations: a subclass says where a fill may go (`candidates`) and
    how it is written there (`render`); ceil(`rate` · candidates) of them, drawn without
    replacement, are filled from the first `top_k` acceptable of the model's `fill_candidates`
    most probable tokens at least `min_fill_prob` probable. `fill_mask_model` is a loaded
    `tfdialemb.augment.fill_mask.FillMaskModel` (one can serve several operations) or a checkpoint
    directory to load (loaded here, so that the operations' flags load no TensorFlow); the other arguments are
    the flags of FILL_OPTIONS, by the same names."""

    needs = ("fill_mask_model",)
    options: Tuple[Option, ...] = FILL_OPTIONS
    """The operation's flags, named and defaulted as its constructor's arguments."""

    def __init__(self, fill_mask_model: Any, rate: float, top_k: int,
                 min_fill_prob: float, seed: int = 0, fill_context: str = FILL_CONTEXT.default,
                 context_utterances: int = CONTEXT_UTTERANCES.default,
                 fill_stop_words: str = FILL_STOP_WORDS.default,
                 fill_candidates: int = FILL_CANDIDATES.default,
                 fill_batch_size: int = FILL_BATCH_SIZE.default, fill_max_length: int = FILL_MAX_LENGTH.default):
        super().__init__(seed)
        if fill_candidates < top_k:
            raise ValueError(f"{self.name}: fill_candidates ({fill_candidates}) must be at least top_k ({top_k})")
        for name, value, low in (("top_k", top_k, 1), ("context_utterances", context_utterances, 0),
                                 ("fill_batch_size", fill_batch_size, 1), ("fill_max_length", fill_max_length, 8)):
            if value < low:
                raise ValueError(f"{self.name}: {name} must be at least {low}, got {value}")
        for name, value in (("the fraction of places filled", rate), ("the probability threshold", min_fill_prob)):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{self.name}: {name} must be in [0, 1], got {value}")
        if fill_context not in FILL_CONTEXTS:
            raise ValueError(f"{self.name}: fill_context must be one of {FILL_CONTEXTS}, got {fill_context!r}")
        from tfdialemb.augment.fill_mask import FillMaskModel  # pylint: disable=import-outside-toplevel

        self.model = fill_mask_model if isinstance(fill_mask_model, FillMaskModel) else FillMaskModel.load(
            fill_mask_model)
        self.rate = rate
        self.top_k = top_k
        self.window = min(fill_candidates, len(self.model.tokenizer.vocab))
        self.min_fill_prob = min_fill_prob
        self.fill_context = fill_context
        self.context_utterances = context_utterances
        self.stop_words = stop_words(fill_stop_words)
        self.batch_size = fill_batch_size
        self.max_length = min(fill_max_length, self.model.max_length)
        # Per vocabulary id: whether that token may be written as a fill.
        self.whole_words = np.array([not t.startswith("##") and t.isalpha() and t.lower() not in self.stop_words
                                     for t in self.model.tokenizer.vocab])

    def candidates(self, texts: Sequence[str]) -> List[List[Place]]:
        """Every place a fill may go in each utterance of a dialogue (`texts`), in text order."""
        raise TypeError(f"{type(self).__name__} must define candidates()")

    def places(self, texts: Sequence[str], rng: np.random.Generator) -> List[List[Place]]:
        """The places of each utterance to fill, in text order, drawn with `rng`."""
        drawn = []
        for found in self.candidates(texts):
            chosen = rng.choice(len(found), size=sample_size(len(found), self.rate), replace=False)
            drawn.append([found[i] for i in np.sort(chosen)])
        return drawn

    def render(self, token: str, original: str) -> str:
        """What is written at a place whose original text is `original`."""
        raise TypeError(f"{type(self).__name__} must define render()")

    def model_inputs(self, dialogues: Sequence[Dialogue]) -> Tuple[List[List[int]], List[List[int]]]:
        """The token ids and masked positions that `augment(dialogues)` gives the fill-mask model."""
        sequences, positions, _ = self._inputs(dialogues, self._plans(dialogues, [self.rng(d) for d in dialogues]))
        return sequences, positions

    def _plans(self, dialogues: Sequence[Dialogue], rngs: Sequence[np.random.Generator]) -> List[List[List[Place]]]:
        """The places of every utterance, drawn with its dialogue's generator."""
        return [self.places([turn.text for turn in d.turns], rng) for d, rng in zip(dialogues, rngs)]

    def augment(self, dialogues: Sequence[Dialogue]) -> List[Optional[Dialogue]]:
        rngs = [self.rng(d) for d in dialogues]
        plans = self._plans(dialogues, rngs)
        sequences, positions, owners = self._inputs(dialogues, plans)
        predictions = {}
        for (ids, probs), segments in zip(self.model.top_k(sequences, positions, self.window, self.batch_size),
                                          owners):
            offset = 0
            for owner, count in segments:
                predictions[owner] = ids[offset:offset + count], probs[offset:offset + count]
                offset += count
        vocab = self.model.tokenizer.vocab
        results = []
        for d, (plan, rng) in enumerate(zip(plans, rngs)):
            texts = []
            for u, (turn, places) in enumerate(zip(dialogues[d].turns, plan)):
                ids, probs = predictions.get((d, u), ((), ()))
                fills = [self._choose(i, p, rng) for i, p in zip(ids, probs)]
                text = turn.text
                # Written from the end, so the spans before stay where they were.
                for place, fill in reversed(list(zip(places, fills))):
                    if fill is not None:
                        text = text[:place.start] + self.render(vocab[fill], text[place.start:place.end]) + \
                            text[place.end:]
                texts.append(text)
            unchanged = texts == [turn.text for turn in dialogues[d].turns]
            results.append(None if unchanged else with_texts(dialogues[d], texts, self.name))
        return results

    def _choose(self, ids: np.ndarray, probs: np.ndarray, rng: np.random.Generator) -> Optional[int]:
        """One of the first `top_k` acceptable candidates (`ids` most probable first), drawn ∝ its
        probability; None when none is acceptable."""
        kept = np.flatnonzero(self.whole_words[ids] & (probs >= self.min_fill_prob))[:self.top_k]
        if not len(kept):
            return None
        weights = probs[kept].astype(np.float64)
        return int(ids[kept][rng.choice(len(weights), p=weights / weights.sum())])

    def _units(self, plan: Sequence[Sequence[Place]]) -> List[_Unit]:
        """The model inputs of one dialogue's `plan` (`fill_context`), each holding a place."""
        count = len(plan)
        if self.fill_context == PAIRS:
            units = [_Unit(s, s, min(s + 2, count), min(s + 2, count)) for s in range(0, count, 2)]
        else:
            context = self.context_utterances
            units = [_Unit(max(0, u - context), u, u + 1, min(count, u + 1 + context)) for u in range(count)]
        return [unit for unit in units if any(plan[u] for u in range(unit.masked_first, unit.masked_end))]

    def _inputs(self, dialogues: Sequence[Dialogue], plans) -> Tuple[list, list, list]:
        """Model inputs: token ids, mask positions, and per input its masks' owners as
        ((dialogue, utterance), number of masks) in mask order; the places past a cut are left
        out of the positions."""
        tokenizer = self.model.tokenizer
        sep = tokenizer.sep_id
        texts, pieces = [], []
        for d, plan in zip(dialogues, plans):
            texts.extend(turn.text for turn in d.turns)
            for turn, places in zip(d.turns, plan):
                if places:
                    ends = [0] + [p.end for p in places]
                    starts = [p.start for p in places] + [len(turn.text)]
                    pieces.extend(turn.text[a:b] for a, b in zip(ends, starts))
        tokens = tokenizer.tokenize(texts + pieces, max_tokens=self.max_length).to_list() if texts else []
        utterance_ids, piece_ids = iter(tokens[:len(texts)]), iter(tokens[len(texts):])
        sequences, positions, owners = [], [], []
        for d, (dialogue, plan) in enumerate(zip(dialogues, plans)):
            utterances = [next(utterance_ids) for _ in dialogue.turns]
            masked = []
            for u, places in enumerate(plan):
                target, masks = (list(next(piece_ids)), []) if places else (list(utterances[u]), [])
                for _ in places:
                    masks.append(len(target))
                    target += [tokenizer.mask_id] + list(next(piece_ids))
                masked.append((target, masks))
            for unit in self._units(plan):
                target, segments = [], []
                for u in range(unit.masked_first, unit.masked_end):
                    if target:
                        target.append(sep)
                    segments.append(((d, u), [len(target) + m for m in masked[u][1]]))
                    target += masked[u][0]
                before = [t for ids in utterances[unit.first:unit.masked_first] for t in ids + [sep]]
                after = [t for ids in utterances[unit.masked_end:unit.end] for t in [sep] + ids]
                before, target, after = _fit(before, target, after, self.max_length - 2, sep)
                start = 1 + len(before)
                sequences.append([tokenizer.cls_id] + before + target + after + [sep])
                kept = [(owner, [start + m for m in masks if m < len(target)]) for owner, masks in segments]
                positions.append([p for _, found in kept for p in found])
                owners.append([(owner, len(found)) for owner, found in kept if found])
        return sequences, positions, owners


def _fit(before: list, target: list, after: list, budget: int, sep: int) -> Tuple[list, list, list]:
    """The target whole (cut at its end when alone it exceeds `budget`) and the context tokens
    nearest to it, alternately from either side, within `budget` tokens; a context cut next to a
    separator does not keep it at its outer end."""
    if len(target) >= budget:
        return [], target[:budget], []
    room = budget - len(target)
    if len(before) + len(after) > room:
        keep_before = min(len(before), max((room + 1) // 2, room - len(after)))
        before, after = before[len(before) - keep_before:], after[:room - keep_before]
        while before and before[0] == sep:
            before = before[1:]
        while after and after[-1] == sep:
            after = after[:-1]
    return before, target, after
