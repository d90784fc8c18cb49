"""The baselines that need no training loop (DialogueCSE's Table 2, dial2vec's Table 2) as
`evaluate --embedding=NAME` sources, each registered into `tfdialemb.eval.sources` (whose
interface they follow) with what it gives an evaluator.
"""
import functools
from typing import List

import numpy as np

from tfdialemb.baselines.doc2vec import Doc2VecDialogueEmbedder
from tfdialemb.baselines.glove import GloveEmbedder
from tfdialemb.baselines.plm_mean import PLM_INPUT, PlmMeanDialogueEmbedder
from tfdialemb.baselines.topic import LdaDialogueEmbedder, TfidfDialogueEmbedder
from tfdialemb.baselines.transformers_encoder import load_transformers_encoder
from tfdialemb.baselines.utterance_average import average_utterance_embeddings
from tfdialemb.baselines.whitening import Whitening
from tfdialemb.data.sampling import UtterancePool
from tfdialemb.dialogue import read_dialogues
from tfdialemb.eval.evaluator import ASSIGNMENTS, DIALOGUE_VIEWS, SENTENCES
from tfdialemb.eval.inputs import embed_distinct
from tfdialemb.eval.sources import EmbeddingSource, EncoderSource, register_source
from tfdialemb.eval.task_options import FIT_FILE
from tfdialemb.kind_registry import KINDS
from tfdialemb.core.options import Option

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


class FittedSource(EncoderSource):
    """Whitening or BERT-flow fitted on the encoder's embeddings of a seeded sample of at most
    --fit_utterances utterances of --fit_file; its parameters are recorded in `embedding`."""

    provides = (SENTENCES,)
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


@register_source
class WhiteningSource(FittedSource):
    name = "whitening"
    options = (FIT_FILE, FIT_UTTERANCES, FIT_SEED, WHITENING_DIM)

    def fit(self, corpus):
        transform = Whitening.fit(corpus, k=self.options.whitening_dim)
        self.embedding.update(dim=transform.dim)
        return transform


@register_source
class FlowSource(FittedSource):
    name = "flow"
    options = (FIT_FILE, FIT_UTTERANCES, FIT_SEED) + FLOW

    def fit(self, corpus):
        from tfdialemb.baselines.flow import GlowFlow  # pylint: disable=import-outside-toplevel

        options = self.options
        transform = GlowFlow(corpus.shape[1], seed=options.fit_seed)
        losses = transform.fit(corpus, epochs=options.flow_epochs, batch_size=options.flow_batch_size,
                               learning_rate=options.flow_learning_rate, seed=options.fit_seed)
        self.embedding.update(**transform.config, epochs=options.flow_epochs, batch_size=options.flow_batch_size,
                              learning_rate=options.flow_learning_rate, bits_per_dim_by_epoch=losses)
        return transform


@register_source
class GloveSource(EmbeddingSource):
    """Average GloVe vectors of --glove_file, its coverage recorded in `embedding`."""

    name = "glove"
    options = (GLOVE_FILE,)
    provides = (SENTENCES, DIALOGUE_VIEWS)
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


@register_source
class UtteranceAverageSource(EncoderSource):
    """The mean of a sentence encoder's utterance embeddings (e.g. a DialogueCSE model's)."""

    name = "utterance_average"
    provides = (DIALOGUE_VIEWS,)

    @classmethod
    def settings_kind(cls, task_kind):
        return "sentence"

    def dialogue_views(self, hidden_layers=()):
        encode = self.sentences()
        return lambda dialogues: {"utterance_average": average_utterance_embeddings(dialogues, encode)}


@register_source
class PlmMeanSource(EncoderSource):
    """dial2vec's RoBERTa / T5 baseline: the mean of the top layer of the Hugging Face directory
    --init_checkpoint."""

    name = "plm_mean"
    options = (PLM_INPUT,)
    provides = (DIALOGUE_VIEWS,)

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


class FittedDialogueSource(EmbeddingSource):
    """A bag-of-words or Doc2Vec baseline fitted on --fit_file's dialogues, else on the evaluated ones."""

    provides = (DIALOGUE_VIEWS,)

    def fit_dialogues(self, dialogues) -> list:
        """The dialogues it is fitted on, recorded in `embedding`."""
        fit_file = self.options.fit_file
        fit = list(read_dialogues(fit_file)) if fit_file else list(dialogues)
        self.embedding.update(fit_file=fit_file or self.options.eval_file, fit_dialogues=len(fit))
        return fit


@register_source
class TfidfSource(FittedDialogueSource):
    name = "tfidf"
    options = (FIT_FILE,)

    def dialogue_views(self, hidden_layers=()):
        return lambda dialogues: TfidfDialogueEmbedder(self.fit_dialogues(dialogues)).embed_views(dialogues)


@register_source
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


@register_source
class LdaSource(FittedDialogueSource):
    """LDA topics: by default dial2vec's categorization (each dialogue's most probable topic over
    --runs seeded fits); --lda_metrics=all evaluates one fit's topic distributions as an embedding."""

    name = "lda"
    options = (FIT_FILE, FIT_SEED) + LDA
    provides = (DIALOGUE_VIEWS, ASSIGNMENTS)

    @classmethod
    def provided(cls, options):
        """Topic assignments for categorization, else its topic distributions as dialogue views."""
        return (ASSIGNMENTS,) if options.lda_metrics == "categorization" else (DIALOGUE_VIEWS,)

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
