"""What `evaluate --embedding=NAME` embeds with: the evaluated encoder or one of the baselines that
need no training loop (DialogueCSE's Table 2, dial2vec's Table 2), by name in `SOURCES`.

A source gives an evaluator (`tfdialemb.eval.evaluator`) the functions it scores: `sentences()`
(texts → [n, H]) and `dialogue_views(hidden_layers)` (dialogues → {view: [n, H]}); the encoder's
also gives `runtime(kind)`, a model's runtime of an inference kind. It records what it embedded
in `embedding` (the report's "embedding") as it loads and fits, and declares its own options,
which `evaluate` refuses for another --embedding. Models and fits are made on first use, so a bad
eval file fails before a slow load.
"""
import functools
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from tfdialemb.baselines.doc2vec import Doc2VecDialogueEmbedder
from tfdialemb.baselines.flow import GlowFlow
from tfdialemb.baselines.glove import GloveEmbedder
from tfdialemb.baselines.plm_mean import PLM_INPUT, PlmMeanDialogueEmbedder
from tfdialemb.baselines.topic import LdaDialogueEmbedder, TfidfDialogueEmbedder
from tfdialemb.baselines.transformers_encoder import load_transformers_encoder
from tfdialemb.baselines.utterance_average import average_utterance_embeddings
from tfdialemb.baselines.whitening import Whitening
from tfdialemb.cli import Progress
from tfdialemb.data.sampling import UtterancePool
from tfdialemb.dialogue import read_dialogues
from tfdialemb.eval.inputs import embed_distinct
from tfdialemb.eval.task_options import FIT_FILE
from tfdialemb.inference.dialogue_embedder import DialogueEmbedder
from tfdialemb.inference.embedder import SentenceEmbedder
from tfdialemb.inference.kinds import RUNTIMES
from tfdialemb.inference_kinds import KINDS
from tfdialemb.options import Option
from tfdialemb.serving.exported_embedder import ExportedSentenceEmbedder

FIT_UTTERANCES = Option("fit_utterances", 20000, "Utterances sampled from --fit_file (at most).", lower_bound=2)
FIT_SEED = Option("fit_seed", 0, "Seed of the utterance sample, the flow, LDA (run r: seed + r) and Doc2Vec.")
WHITENING_DIM = Option("whitening_dim", None, "Whitened dimensions kept (default: all).", lower_bound=1,
                       kind=int)
FLOW = (Option("flow_epochs", 1, "BERT-flow training epochs.", lower_bound=1),
        Option("flow_batch_size", 32, "BERT-flow training batch size.", lower_bound=1),
        Option("flow_learning_rate", 1e-3, "BERT-flow learning rate.", lower_bound=0.0))
GLOVE_FILE = Option("glove_file", None, "Local GloVe / word2vec text file for --embedding=glove.", kind=str)
LDA = (Option("lda_topics", None, "LDA topics (default: the number of labels).", lower_bound=2, kind=int),
       Option("lda_metrics", "categorization", "categorization (dial2vec Sec. 4.3: each dialogue's most "
              "probable topic, purity, ARI, NMI and accuracy over --runs LDA fits) or all (one fit's topic "
              "distributions evaluated like any embedding, KMeans categorization included).",
              choices=("categorization", "all")))


class EncoderSource:
    """The evaluated encoder: a model directory or any loadable checkpoint (`model`, a ModelSource),
    or an exported sentence SavedModel (--saved_model)."""

    name = "encoder"
    options: Tuple[Option, ...] = ()
    uses_encoder = True
    """False: no checkpoint is given (a baseline fitted or read from files)."""
    required: Optional[str] = None
    """An option the source cannot do without."""
    assigns = False
    """True: it assigns dialogues to topics (`assign_views`) instead of embedding them."""

    def __init__(self, model, settings: Mapping[str, Any], options):
        self.model, self.settings, self.options = model, dict(settings), options
        self.embedding: Dict[str, Any] = {"kind": self.name}

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

    @functools.cached_property
    def exported(self) -> ExportedSentenceEmbedder:
        return ExportedSentenceEmbedder(self.options.saved_model)

    @functools.cached_property
    def sentence_embedder(self):
        if self.options.saved_model:
            return self.exported
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
        """The model's runtime of `kind` (`tfdialemb.inference.kinds.RUNTIMES`), a trained head's for
        the kinds that need one."""
        return RUNTIMES[kind].from_settings(*self.model.serving_parts(kind), self.settings)


class FittedSource(EncoderSource):
    """Whitening or BERT-flow fitted on the encoder's embeddings of a seeded sample of at most
    --fit_utterances utterances of --fit_file; its parameters are recorded in `embedding`."""

    required = "fit_file"

    def fit(self, corpus: np.ndarray):
        """The fitted transform of `corpus`'s embeddings."""
        raise TypeError(f"{type(self).__name__} must define fit()")

    def sentences(self):
        encode = super().sentences()

        @functools.lru_cache(maxsize=None)
        def transform():
            options = self.options
            sample = sample_utterances(options.fit_file, options.fit_utterances, options.fit_seed)
            vectors = embed_distinct(encode, sample)
            self.embedding.update(fit_file=options.fit_file, fit_utterances=len(sample), fit_seed=options.fit_seed)
            return self.fit(np.stack([vectors[text] for text in sample]))

        return lambda texts: transform().transform(encode(texts))


class WhiteningSource(FittedSource):
    name = "whitening"
    options = (FIT_FILE, FIT_UTTERANCES, FIT_SEED, WHITENING_DIM)

    def fit(self, corpus):
        transform = Whitening.fit(corpus, k=self.options.whitening_dim)
        self.embedding.update(dim=transform.dim)
        return transform


class FlowSource(FittedSource):
    name = "flow"
    options = (FIT_FILE, FIT_UTTERANCES, FIT_SEED) + FLOW

    def fit(self, corpus):
        options = self.options
        transform = GlowFlow(corpus.shape[1], seed=options.fit_seed)
        losses = transform.fit(corpus, epochs=options.flow_epochs, batch_size=options.flow_batch_size,
                               learning_rate=options.flow_learning_rate, seed=options.fit_seed)
        self.embedding.update(**transform.config, epochs=options.flow_epochs, batch_size=options.flow_batch_size,
                              learning_rate=options.flow_learning_rate, bits_per_dim_by_epoch=losses)
        return transform


class GloveSource(EncoderSource):
    """Average GloVe vectors of --glove_file, its coverage recorded in `embedding`."""

    name = "glove"
    options = (GLOVE_FILE,)
    uses_encoder = False
    required = "glove_file"

    def sentences(self):
        glove = GloveEmbedder(self.options.glove_file)

        def embed(texts):
            vectors = glove.embed(texts)
            self.embedding.update(glove_file=self.options.glove_file, **glove.coverage())
            return vectors

        return embed

    def dialogue_views(self, hidden_layers=()):
        embed = self.sentences()
        return lambda dialogues: {"glove": embed([" ".join(t.text for t in d.turns) for d in dialogues])}


class UtteranceAverageSource(EncoderSource):
    """The mean of a sentence encoder's utterance embeddings (e.g. a DialogueCSE model's)."""

    name = "utterance_average"

    @classmethod
    def settings_kind(cls, task_kind):
        return "sentence"

    def dialogue_views(self, hidden_layers=()):
        encode = self.sentences()
        return lambda dialogues: {"utterance_average": average_utterance_embeddings(dialogues, encode)}


class PlmMeanSource(EncoderSource):
    """dial2vec's RoBERTa / T5 baseline: the mean of the top layer of the Hugging Face directory
    --init_checkpoint."""

    name = "plm_mean"
    options = (PLM_INPUT,)

    @classmethod
    def settings_kind(cls, task_kind):
        return None

    @classmethod
    def settings_read(cls, kind):
        return ("max_length",)

    @classmethod
    def check(cls, options):
        if options.model_dir or options.saved_model or not options.init_checkpoint:
            raise ValueError("--embedding=plm_mean reads a Hugging Face RoBERTa or T5 directory: give it as "
                             "--init_checkpoint")

    def dialogue_views(self, hidden_layers=()):
        options = self.options

        def embed_views(dialogues):
            encoder = load_transformers_encoder(options.init_checkpoint)
            embedder = PlmMeanDialogueEmbedder(encoder, getattr(options, PLM_INPUT.name),
                                               options.max_length or KINDS["dialogue"].default_max_length)
            self.embedding.update(model_type=encoder.model_type, **{PLM_INPUT.name: embedder.input_layout},
                                  max_length=embedder.max_length)
            return embedder.embed_views(dialogues, batch_size=max(1, options.batch_size // 4),
                                        on_batch=self.progress(len(dialogues), "dialogues"))

        return embed_views


class FittedDialogueSource(EncoderSource):
    """A bag-of-words or Doc2Vec baseline fitted on --fit_file's dialogues, else on the evaluated ones."""

    uses_encoder = False

    def fit_dialogues(self, dialogues) -> list:
        """The dialogues it is fitted on, recorded in `embedding`."""
        fit_file = self.options.fit_file
        fit = list(read_dialogues(fit_file)) if fit_file else list(dialogues)
        self.embedding.update(fit_file=fit_file or self.options.eval_file, fit_dialogues=len(fit))
        return fit


class TfidfSource(FittedDialogueSource):
    name = "tfidf"
    options = (FIT_FILE,)

    def dialogue_views(self, hidden_layers=()):
        return lambda dialogues: TfidfDialogueEmbedder(self.fit_dialogues(dialogues)).embed_views(dialogues)


class Doc2VecSource(FittedDialogueSource):
    name = "doc2vec"
    options = (FIT_FILE, FIT_SEED)

    def dialogue_views(self, hidden_layers=()):
        options = self.options

        def embed_views(dialogues):
            doc2vec = Doc2VecDialogueEmbedder(self.fit_dialogues(dialogues), seed=options.fit_seed)
            self.embedding.update(seed=options.fit_seed, **doc2vec.settings,
                                  vectors="inferred" if options.fit_file else "trained")
            # Without --fit_file the evaluated dialogues are the training documents.
            return {doc2vec.view: doc2vec.embed(dialogues) if options.fit_file else doc2vec.fitted()}

        return embed_views


class LdaSource(FittedDialogueSource):
    """LDA topics: by default dial2vec's categorization (each dialogue's most probable topic over
    --runs seeded fits); --lda_metrics=all evaluates one fit's topic distributions as an embedding."""

    name = "lda"
    options = (FIT_FILE, FIT_SEED) + LDA

    @property
    def assigns(self):
        return self.options.lda_metrics == "categorization"

    def topics(self, dialogues) -> int:
        return self.options.lda_topics or len({d.labels[self.options.label_key] for d in dialogues})

    def dialogue_views(self, hidden_layers=()):
        def embed_views(dialogues):
            fit, topics = self.fit_dialogues(dialogues), self.topics(dialogues)
            self.embedding.update(topics=topics, seed=self.options.fit_seed, metrics="all")
            return LdaDialogueEmbedder(fit, n_components=topics, seed=self.options.fit_seed).embed_views(dialogues)
        return embed_views

    def assign_views(self, captured: dict):
        """assign_views(dialogues) → {"lda": each of --runs seeded fits' most probable topic per
        dialogue}; the first fit's topic distributions go to `captured["views"]` for the plots."""
        options = self.options

        def assign_views(dialogues):
            fit, topics = self.fit_dialogues(dialogues), self.topics(dialogues)
            self.embedding.update(topics=topics, seed=options.fit_seed, metrics="categorization", fits=options.runs)
            fitted = [LdaDialogueEmbedder(fit, n_components=topics, seed=options.fit_seed + run)
                      for run in range(options.runs)]
            first = fitted[0].embed(dialogues)
            captured["views"] = {"lda": first}
            return {"lda": [first.argmax(axis=1)] + [lda.assign(dialogues) for lda in fitted[1:]]}

        return assign_views


SOURCES = {source.name: source for source in (
    EncoderSource, WhiteningSource, FlowSource, GloveSource, TfidfSource, LdaSource, Doc2VecSource, PlmMeanSource,
    UtteranceAverageSource)}
"""--embedding → its source."""


def source_options() -> List[Tuple[str, Option]]:
    """(source name, option) of every source's options."""
    return [(name, option) for name, source in SOURCES.items() for option in source.options]


def sample_utterances(path: str, limit: int, seed: int) -> List[str]:
    """A uniform sample of at most `limit` utterances (turn texts) of a dialogue file.

    A reservoir (`UtterancePool`), so a corpus of any size streams through memory that holds
    `limit` texts; the same file and seed give the same sample.
    """
    pool = UtterancePool(limit, seed)
    for index, dialogue in enumerate(read_dialogues(path)):
        pool.add(index, [turn.text for turn in dialogue.turns])
    if len(pool.texts) < 2:
        raise ValueError(f"{path}: fitting needs at least 2 utterances, got {len(pool.texts)}")
    return pool.texts
