"""What `evaluate --embedding=NAME` embeds with: a registry of embedding sources, found by name,
and the evaluated encoder (`EncoderSource`, `--embedding=encoder`). The baselines register theirs
(`tfdialemb.baselines.sources`), as code outside the package may.

A source says what it gives an evaluator (`provides`, among `tfdialemb.eval.evaluator.INPUTS`), and
an evaluator what it scores (`Evaluator.inputs`), so neither names the other: `sentences()` (texts →
[n, H]), `dialogue_views(hidden_layers)` (dialogues → {view: [n, H]}), `assign_views(captured)`
(dialogues → {view: a cluster per dialogue, per run}), or the model itself (its recorded `settings`, `model` and
`runtime(kind)`). A source records what it embedded in `embedding` (the report's "embedding") as
it loads and fits, and declares its own options, which `evaluate` refuses for another --embedding.
Models and fits are made on first use, so a bad eval file fails before a slow load.
"""
import functools
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from tfdialemb.eval.evaluator import DIALOGUE_VIEWS, INPUTS, MODEL, SENTENCES
from tfdialemb.inference.kinds import runtime_class
from tfdialemb.kind_registry import KINDS
from tfdialemb.core.options import Option
from tfdialemb.core.progress import Progress


class EmbeddingSource:
    """Base of every source; subclasses set `name`, `provides` and the functions it names."""

    name = ""
    options: Tuple[Option, ...] = ()
    provides: Tuple[str, ...] = ()
    """What it gives an evaluator (`tfdialemb.eval.evaluator.INPUTS`)."""
    uses_encoder = False
    """True: it embeds with the checkpoint given (--model_dir, --init_checkpoint, --saved_model)."""
    required: Optional[str] = None
    """An option the source cannot do without."""

    def __init__(self, model, settings: Mapping[str, Any], options):
        self.model, self.settings, self.options = model, dict(settings), options
        self.embedding: Dict[str, Any] = {"kind": self.name}

    @classmethod
    def provided(cls, options) -> Tuple[str, ...]:
        """What it gives with these option values (default: `provides`)."""
        del options
        return cls.provides

    @classmethod
    def settings_kind(cls, task_kind: Optional[str]) -> Optional[str]:
        """The inference kind whose settings it reads for a task of `task_kind` (None: none)."""
        return task_kind if cls.uses_encoder else None

    @classmethod
    def settings_read(cls, kind: Optional[str]) -> Tuple[str, ...]:
        """The settings flags it reads."""
        return KINDS[kind].settings if kind else ()

    @classmethod
    def check(cls, options) -> None:
        """A ValueError naming the checkpoint flags it needs or cannot use."""
        has_checkpoint = bool(options.model_dir or options.init_checkpoint or options.saved_model)
        if not cls.uses_encoder and has_checkpoint:
            raise ValueError(f"--embedding={cls.name} uses no encoder: "
                             "drop --model_dir/--init_checkpoint/--saved_model")
        if cls.uses_encoder and not has_checkpoint:
            raise ValueError(f"--embedding={cls.name} needs --model_dir, --init_checkpoint or --saved_model")

    @staticmethod
    def progress(total: int, unit: str) -> Callable[[int], None]:
        """on_batch(count) advancing a progress bar of `total` `unit`."""
        return Progress(total, unit).advance


class EncoderSource(EmbeddingSource):
    """The evaluated encoder: a model directory or any loadable checkpoint (`model`, a ModelSource),
    or an exported sentence SavedModel (--saved_model)."""

    name = "encoder"
    provides = (MODEL, SENTENCES, DIALOGUE_VIEWS)
    uses_encoder = True

    @functools.cached_property
    def exported(self):
        """The `tfdialemb.serving.exported_embedder.ExportedSentenceEmbedder` of --saved_model."""
        # pylint: disable=import-outside-toplevel
        from tfdialemb.serving.exported_embedder import ExportedSentenceEmbedder

        return ExportedSentenceEmbedder(self.options.saved_model)

    @functools.cached_property
    def sentence_embedder(self):
        if self.options.saved_model:
            return self.exported
        from tfdialemb.inference.embedder import SentenceEmbedder  # pylint: disable=import-outside-toplevel

        return SentenceEmbedder.from_settings(self.model.pretrained.encoder, self.model.pretrained.tokenizer,
                                              self.settings)

    def sentences(self) -> Callable[[Sequence[str]], np.ndarray]:
        """encode(texts) → [n, H] sentence embeddings, with a progress bar."""
        def encode(texts):
            return self.sentence_embedder.embed(texts, batch_size=self.options.batch_size,
                                                on_batch=self.progress(len(texts), "sentences"))
        return encode

    def dialogue_views(self, hidden_layers: Sequence[int] = ()) -> Callable[[Sequence], Dict[str, np.ndarray]]:
        """embed_views(dialogues) → the DialogueEmbedder's {view: [N, H]} (with `hidden_layers`' views);
        the model is loaded once, when first called, and its settings recorded in `embedding`."""
        @functools.lru_cache(maxsize=None)
        def embedder():
            # pylint: disable=import-outside-toplevel
            from tfdialemb.inference.dialogue_embedder import DialogueEmbedder

            pretrained = self.model.pretrained
            loaded = DialogueEmbedder.from_settings(pretrained.encoder, pretrained.tokenizer, self.settings,
                                                    hidden_layers=hidden_layers)
            self.embedding.update(max_length=loaded.max_length, separator=self.settings["separator"],
                                  num_roles=loaded.num_roles, role_turn_embeddings=loaded.role_turn_embeddings,
                                  merge_consecutive_turns=loaded.merge_consecutive_turns,
                                  speaker_prefix=loaded.speaker_prefix, final_separator=loaded.final_separator,
                                  dialogue_pooling=loaded.pooling)
            return loaded

        def embed_views(dialogues):
            return embedder().embed(dialogues, batch_size=max(1, self.options.batch_size // 4),
                                    on_batch=self.progress(len(dialogues), "dialogues"))

        return embed_views

    def runtime(self, kind: str):
        """The model's runtime of `kind` (`tfdialemb.inference.kinds.runtime_class`), a trained head's
        for the kinds that need one."""
        return runtime_class(kind).from_settings(*self.model.serving_parts(kind), self.settings)


_SOURCES: Dict[str, type] = {}


def register_source(source_class: type) -> type:
    """Class decorator registering an `EmbeddingSource` subclass as `--embedding=NAME`."""
    unknown = sorted(set(source_class.provides) - set(INPUTS))
    if not source_class.name or unknown:
        raise ValueError(f"{source_class.__name__} needs a name, and gives only inputs of {INPUTS} (not {unknown})")
    if _SOURCES.get(source_class.name, source_class) is not source_class:
        raise ValueError(f"an embedding source named {source_class.name!r} is already registered")
    _SOURCES[source_class.name] = source_class
    return source_class


def unregister_source(name: str) -> None:
    """Removes a registered source (for sources defined by tests)."""
    _SOURCES.pop(name, None)


def get_source(name: str) -> type:
    """The source registered as `name`; a ValueError lists the known ones."""
    if name not in _SOURCES:
        raise ValueError(f"unknown embedding {name!r}; known: {', '.join(sorted(_SOURCES))}")
    return _SOURCES[name]


def sources() -> Dict[str, type]:
    """Every registered source by name, the encoder first."""
    return dict(_SOURCES)


def source_options() -> List[Tuple[str, Option]]:
    """(source name, option) of every source's options."""
    return [(name, option) for name, source in _SOURCES.items() for option in source.options]


register_source(EncoderSource)
