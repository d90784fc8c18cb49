"""Back-translation (thesis Sec. 4.1, "обратный перевод"): every utterance translated into a pivot
language and back with OPUS-MT models [42], speakers and turn order kept.

As the released code (mylib/augmentations/back_translation.py `BackTranslator`, built in
mylib/datamakers/augmentations.py with language='ru'): the pivot is Russian (opus-mt-en-ru, then
opus-mt-ru-en), each utterance is translated on its own (no dialogue context), in batches of 16
across the dialogues of a batch, with the models' own decoding settings: beam search with the
num_beams of their generation config (transformers' Marian converter copies the Marian decoder.yml
beam-size) and at most 512 tokens (the converter's max_length). Every dialogue yields an
augmented one, even when the round trip reproduces it word for word: the released code writes
every result and its positive-pair builder (mylib/datamakers/contrastive.py) keeps every view.
One addition: a turn whose back-translation is blank (the model ended at once) keeps its text,
since the canonical format has no empty turns (the released code would keep the empty string).

The models' recorded languages are checked against the pivot where they are certain (two-letter
codes in tokenizer_config.json); a forward model with several target languages gets the
`>>pivot<<` token its tokenizer lists; a backward model with several target languages is refused,
as nothing here names the dialogues' own language.
"""
from typing import List, Optional, Sequence, Tuple, Union

from tfdialemb.augment.base import Augmentation, with_texts
from tfdialemb.dialogue import Dialogue, has_visible_text
from tfdialemb.encoders.errors import CheckpointError
from tfdialemb.core.options import Option

TRANSLATION_MODELS = Option(
    "translation_models", "",
    "Back-translation models: FORWARD_DIR,BACKWARD_DIR, two local OPUS-MT (MarianMT) directories, "
    "original→pivot then pivot→original (released: opus-mt-en-ru,opus-mt-ru-en).")
PIVOT = Option("pivot", "ru", "Back-translation pivot language (released: ru); checked against the "
               "models' tokenizer_config.json and used as the >>pivot<< token of a multi-target model.")
TRANSLATION_BEAMS = Option("translation_beams", 0, "Beams of back-translation decoding: 1 = greedy, 0 = "
                           "each model's own generation config (released; OPUS-MT's num_beams).", lower_bound=0)
TRANSLATION_BATCH_SIZE = Option("translation_batch_size", 16, "Utterances per translation batch "
                                "(released: 16).", lower_bound=1)
TRANSLATION_MAX_LENGTH = Option("translation_max_length", 512, "Tokens an utterance and its "
                                "translation are cut to (OPUS-MT's own setting, 512).", lower_bound=2)
TRANSLATION_XLA = Option("translation_xla", False, "Decode translations in XLA-compiled graphs: one compile "
                         "per padded batch shape, then no Python per step (for large corpora).")
OPTIONS = (TRANSLATION_MODELS, PIVOT, TRANSLATION_BEAMS, TRANSLATION_BATCH_SIZE, TRANSLATION_MAX_LENGTH,
           TRANSLATION_XLA)


def model_directories(translation_models: Union[str, Sequence[str]]) -> Tuple[str, str]:
    """(forward, backward) from `--translation_models=FORWARD_DIR,BACKWARD_DIR` or a pair."""
    parts = [p.strip() for p in translation_models.split(",")] if isinstance(translation_models, str) \
        else [str(p) for p in translation_models]
    if len(parts) != 2 or not all(parts):
        raise ValueError(f"--translation_models={translation_models!r}: expected two OPUS-MT directories, "
                         f"FORWARD_DIR,BACKWARD_DIR (e.g. opus-mt-en-{PIVOT.default},opus-mt-{PIVOT.default}-en)")
    return parts[0], parts[1]


class BackTranslation(Augmentation):
    """Every utterance of a dialogue translated to `pivot` and back."""

    name = "translate"
    needs = ("translation_models",)

    def __init__(self, translation_models: Union[str, Sequence[str]], pivot: str = PIVOT.default,
                 translation_beams: int = TRANSLATION_BEAMS.default,
                 translation_batch_size: int = TRANSLATION_BATCH_SIZE.default,
                 translation_max_length: int = TRANSLATION_MAX_LENGTH.default,
                 translation_xla: bool = TRANSLATION_XLA.default, seed: int = 0):
        super().__init__(seed)
        for option, value in ((TRANSLATION_BEAMS, translation_beams), (TRANSLATION_BATCH_SIZE, translation_batch_size),
                              (TRANSLATION_MAX_LENGTH, translation_max_length)):
            if value < option.lower_bound:
                raise ValueError(f"--{option.name}={value}: must be at least {option.lower_bound:g}")
        from tfdialemb.augment.marian import MarianTranslator  # pylint: disable=import-outside-toplevel

        forward_dir, backward_dir = model_directories(translation_models)
        self.pivot = pivot
        self.beams = translation_beams
        self.batch_size = translation_batch_size
        self.max_length = translation_max_length
        self.forward = MarianTranslator(forward_dir, translation_xla)
        self.backward = MarianTranslator(backward_dir, translation_xla)
        self.pivot_token = self._check_languages()

    def _check_languages(self) -> Optional[str]:
        """The forward model's `>>pivot<<` token (None for a single-target model), after checking
        that the two models go original→pivot→original where their configs say so."""
        from tfdialemb.augment.marian import conflicting  # pylint: disable=import-outside-toplevel

        forward, backward = self.forward, self.backward
        if backward.language_tokens:
            raise CheckpointError(f"{backward.directory}: translates into several languages "
                                  f"({', '.join(backward.language_tokens[:5])}, ...); back-translation "
                                  "needs a model into the dialogues' language alone")
        token = forward.language_token(self.pivot) if forward.language_tokens else None
        for directory, recorded, role in (
                (forward.directory, None if forward.language_tokens else forward.target_language, "target"),
                (backward.directory, backward.source_language, "source")):
            if conflicting(recorded, self.pivot):
                raise CheckpointError(f"{directory}: its {role} language is {recorded!r} (tokenizer_config.json), "
                                      f"not the pivot {self.pivot!r} (--pivot)")
        if conflicting(forward.source_language, backward.target_language or ""):
            raise CheckpointError(f"{forward.directory} translates from {forward.source_language!r} but "
                                  f"{backward.directory} back into {backward.target_language!r}")
        return token

    def back_translate(self, texts: Sequence[str]) -> List[str]:
        """Each text through the pivot and back; a blank result keeps the text."""
        settings = dict(beams=self.beams, batch_size=self.batch_size, max_length=self.max_length)
        pivot = self.forward.translate(texts, language_token=self.pivot_token, **settings)
        back = self.backward.translate(pivot, **settings)
        return [b if has_visible_text(b) else t for t, b in zip(texts, back)]

    def augment(self, dialogues: Sequence[Dialogue]) -> List[Optional[Dialogue]]:
        texts = self.back_translate([turn.text for dialogue in dialogues for turn in dialogue.turns])
        results, start = [], 0
        for dialogue in dialogues:
            end = start + len(dialogue.turns)
            results.append(with_texts(dialogue, texts[start:end], self.name))
            start = end
        return results
