"""TraceWhenWorthIt: eager until tracing pays, one trace after; embedders give the same numbers
on both paths."""
import numpy as np
import pytest
import tensorflow as tf
import tiny_bert
from tiny_corpus import TOKENIZER, corpus

from tfdialemb.dialogue import role_ids
from tfdialemb.encoders import Encoder, EncoderConfig
from tfdialemb.inference.dialogue_embedder import DialogueEmbedder
from tfdialemb.inference.embedder import SentenceEmbedder
from tfdialemb.inference.pair_scorer import PairScorer
from tfdialemb.inference.trace_policy import TraceWhenWorthIt
from tfdialemb.methods.models.fgc import FineGrainedContrastModel


class Doubler(tf.Module):
    """Counts how often its Python body runs: once per eager call, once per trace."""

    def __init__(self):
        super().__init__()
        self.body_runs = 0

    @tf.function(autograph=False, input_signature=[tf.TensorSpec([None], tf.float32)], reduce_retracing=True)
    def double(self, x):
        self.body_runs += 1
        return 2.0 * x


def test_eager_while_within_break_even_then_one_trace_for_good():
    module = Doubler()
    policy = TraceWhenWorthIt(module.double, break_even=4)
    run = policy.for_calls(3)
    for n in (1, 2, 3):
        np.testing.assert_array_equal(run(tf.ones([n])).numpy(), np.full([n], 2.0))
    assert module.body_runs == 3  # eager: the body ran on every call
    run = policy.for_calls(2)  # 3 + 2 > 4: tracing now pays
    for n in (1, 5, 2, 7):
        np.testing.assert_array_equal(run(tf.ones([n])).numpy(), np.full([n], 2.0))
    assert module.body_runs == 4  # one trace served every shape
    run = policy.for_calls(1)  # once traced, a short run does not go back to eager
    run(tf.ones([3]))
    assert module.body_runs == 4


def test_a_long_first_run_traces_at_once():
    module = Doubler()
    run = TraceWhenWorthIt(module.double, break_even=4).for_calls(10)
    for n in range(1, 11):
        run(tf.ones([n]))
    assert module.body_runs == 1


def test_a_run_counts_its_batches():
    module = Doubler()
    policy = TraceWhenWorthIt(module.double, break_even=4)
    assert policy.for_batches(8, 2) == module.double.python_function  # 4 batches: eager
    assert policy.for_batches(1, 64) == module.double  # a fifth batch passes break-even: traced
    with pytest.raises(ValueError, match="batch_size must be positive"):
        policy.for_batches(3, 0)


def _encoder():
    tf.keras.utils.set_random_seed(5)
    return Encoder(EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG)).build_variables()


def test_sentence_embedder_eager_batches_equal_the_traced_graph():
    embedder = SentenceEmbedder(_encoder(), TOKENIZER)
    texts = ["hello there", "book a taxi please to the hotel", "fine"]
    eager = embedder.embed(texts, batch_size=1)  # 3 batches: eager
    traced = np.concatenate([embedder.embed_batch(tf.constant([t])).numpy() for t in texts])
    np.testing.assert_allclose(eager, traced, atol=1e-6)
    np.testing.assert_allclose(embedder.embed(texts * 10, batch_size=1), np.tile(traced, [10, 1]), atol=1e-6)


def test_dialogue_embedder_eager_batches_equal_the_traced_graph():
    embedder = DialogueEmbedder(_encoder(), TOKENIZER)
    dialogues = corpus(n=3, seed=8)
    eager = embedder.embed(dialogues, batch_size=1)
    for i, dialogue in enumerate(dialogues):
        turns = tf.ragged.constant([[t.text for t in dialogue.turns]], tf.string)
        speakers = tf.ragged.constant([role_ids(dialogue)], tf.int32)
        for name, value in embedder.embed_batch(turns, speakers).items():
            np.testing.assert_allclose(eager[name][i], value.numpy()[0], atol=1e-6)


def test_pair_scorer_eager_batches_equal_the_traced_graph():
    scorer = PairScorer(FineGrainedContrastModel(_encoder()), TOKENIZER, max_length=32)
    contexts = [["hello there", "how are you"], ["book a taxi"], ["fine", "thanks", "bye"]]
    responses = ["fine thanks", "to the hotel please", "good"]
    eager = scorer.score(contexts, responses, batch_size=1)  # 3 batches: eager
    traced = np.concatenate([scorer.score_batch(tf.constant(c), tf.constant([len(c)]), tf.constant([r])).numpy()
                             for c, r in zip(contexts, responses)])
    np.testing.assert_allclose(eager, traced, atol=1e-6)
    np.testing.assert_allclose(scorer.score(contexts * 10, responses * 10, batch_size=1), np.tile(traced, 10),
                               atol=1e-6)
    representations = scorer.represent(contexts, responses, batch_size=1)
    for i, (c, r) in enumerate(zip(contexts, responses)):
        for name, value in scorer.represent_batch(tf.constant(c), tf.constant([len(c)]), tf.constant([r])).items():
            np.testing.assert_allclose(representations[name][i], value.numpy()[0], atol=1e-6)
