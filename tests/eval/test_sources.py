"""Evaluators say what they score and sources what they give, so the `--embedding` values a task takes
follow from both registries (neither names the other): the papers' tables come out of them."""
import pytest

from tfdialemb.baselines import sources as baselines  # noqa: F401  (registers the baselines' sources)
from tfdialemb.eval.evaluator import INPUTS, OptionValues, evaluators
from tfdialemb.eval.sources import EmbeddingSource, get_source, register_source, sources, unregister_source

CATEGORIZATION = OptionValues({"lda_metrics": "categorization"})


def taken(task, options=CATEGORIZATION):
    inputs = set(evaluators()[task].inputs)
    return [name for name, source in sources().items() if set(source.provided(options)) & inputs]


def test_every_evaluator_scores_and_every_source_gives_known_inputs():
    assert all(set(e.inputs) <= set(INPUTS) and e.inputs for e in evaluators().values())
    assert all(set(s.provides) <= set(INPUTS) and s.provides for s in sources().values())


def test_the_tasks_take_the_baselines_of_their_papers():
    assert sorted(taken("sr")) == sorted(taken("dsts")) == ["encoder", "flow", "glove", "whitening"]  # DialogueCSE
    assert sorted(taken("dialogue")) == ["doc2vec", "encoder", "glove", "lda", "plm_mean", "tfidf",
                                         "utterance_average"]  # dial2vec
    assert taken("probes") == taken("response_selection") == ["encoder"]


def test_lda_gives_topic_assignments_or_its_topic_distributions_as_the_option_says():
    lda = get_source("lda")
    assert lda.provided(CATEGORIZATION) == ("topic assignments",)
    assert lda.provided(OptionValues({"lda_metrics": "all"})) == ("dialogue views",)


def test_a_source_is_refused_an_input_no_evaluator_scores_and_a_taken_name():
    with pytest.raises(ValueError, match="gives only inputs of"):
        register_source(type("Painted", (EmbeddingSource,), {"name": "painted", "provides": ("colours",)}))
    with pytest.raises(ValueError, match="'glove' is already registered"):
        register_source(type("Glove", (EmbeddingSource,), {"name": "glove", "provides": ("sentences",)}))
    unregister_source("painted")
    with pytest.raises(ValueError, match="unknown embedding 'painted'"):
        get_source("painted")
