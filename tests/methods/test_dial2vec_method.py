"""Dial2vecModel: the loss against a numpy derivation of Eq. 1-6, gradients, embeddings, replicas."""
import numpy as np
import pytest
import tensorflow as tf

import tiny_bert
from tiny_corpus import TOKENIZER
from tfdialemb.encoders import Encoder, EncoderConfig
from tfdialemb.methods.models.dial2vec import Dial2vecModel

CONFIG = EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG).replace(hidden_dropout=0.0, attention_dropout=0.0)


def _encoder(**changes):
    tf.keras.utils.set_random_seed(3)
    return Encoder(CONFIG.replace(**changes)).build_variables()


def _batch(structures, seed=0):
    """structures[b][s] = [(role, tokens), ...] turns of sample s of dialogue b → a dense batch.

    Tokens are random ids; [CLS] leads with turn 0 and the first turn's role, as packed."""
    rng = np.random.default_rng(seed)
    length = max(1 + sum(n for _, n in turns) for sample in structures for turns in sample)
    shape = (len(structures), max(len(sample) for sample in structures), length)
    batch = {key: np.zeros(shape, np.int32) for key in
             ("samples", "samples_mask", "samples_turn_ids", "samples_role_ids")}
    for b, sample in enumerate(structures):
        for s, turns in enumerate(sample):
            roles = [turns[0][0]] + [role for role, n in turns for _ in range(n)]
            turn_ids = [0] + [t for t, (_, n) in enumerate(turns) for _ in range(n)]
            n = len(roles)
            batch["samples"][b, s, :n] = [TOKENIZER.cls_id] + list(rng.integers(5, len(tiny_bert.WORDS), n - 1))
            batch["samples_mask"][b, s, :n] = 1
            batch["samples_turn_ids"][b, s, :n] = turn_ids
            batch["samples_role_ids"][b, s, :n] = roles
    return batch


def _numpy_similarities(states, mask, turns, roles, num_roles, window):
    """sim(Ê^p, Ẽ^p) of Eq. 5 from Eq. 1-3 written out token by token, float64."""
    states = states.astype(np.float64)
    sims = np.zeros([states.shape[0], num_roles])
    for n in range(states.shape[0]):
        valid = mask[n] > 0
        for r in range(num_roles):
            own, rest = np.flatnonzero(valid & (roles[n] == r)), np.flatnonzero(valid & (roles[n] != r))
            if own.size == 0 or rest.size == 0:
                continue
            cross = np.zeros(states.shape[-1])
            for i in rest:
                for j in own:
                    if window is None or abs(turns[n, i] - turns[n, j]) <= window:
                        cross += states[n, i] @ states[n, j] * states[n, j]
            cross /= rest.size
            own_mean = states[n, own].mean(axis=0)
            norm = np.linalg.norm(own_mean) * np.linalg.norm(cross)
            sims[n, r] = own_mean @ cross / norm if norm > 0 else 0.0
    return sims


def _numpy_loss(encoder, batch, samples, num_roles, window, temperature, variant):
    pick = {k: v[:, :samples] for k, v in batch.items()}
    b, s, t = pick["samples"].shape
    flat = {k: v.reshape(b * s, t) for k, v in pick.items()}
    states = encoder({"input_word_ids": flat["samples"], "input_mask": flat["samples_mask"]})["sequence_output"]
    sims = _numpy_similarities(states.numpy(), flat["samples_mask"], flat["samples_turn_ids"],
                               flat["samples_role_ids"], num_roles, window).reshape(b, s, num_roles)
    losses, every_role, per_role = np.zeros(b), np.zeros(b), np.zeros(b)
    for example in range(b):
        valid = pick["samples_mask"][example, 0] > 0
        speaking = [r for r in range(num_roles) if (pick["samples_role_ids"][example, 0][valid] == r).any()]
        present = speaking if len(speaking) > 1 else []  # a lone speaker has no counterpart
        first = []
        for r in present:
            logits = sims[example, :, r] / temperature
            term = -(logits[0] - np.log(np.exp(logits).sum()))
            losses[example] += term / s if variant == "released" else term
            first.append(bool(np.argmax(sims[example, :, r]) == 0))
        every_role[example] = float(bool(first) and all(first))
        per_role[example] = sum(first) / max(len(first), 1)
    return losses, {"positive_first_every_role": every_role, "positive_first_per_role": per_role}


TWO_PARTY = [
    # 4 turns with window 1: turn 0 never meets turn 3; negatives shorter (padding); a 4th stored sample.
    [[(0, 3), (1, 2), (0, 2), (1, 1)], [(0, 2), (1, 3), (0, 1), (1, 1)], [(0, 1), (1, 1), (0, 2)],
     [(0, 2), (1, 2)]],
    # Role 1 speaks a single turn.
    [[(0, 2), (1, 2), (0, 2)], [(0, 1), (1, 3), (0, 2)], [(0, 2), (1, 1), (0, 1)], [(0, 1), (1, 1)]],
]
THREE_PARTY = [
    [[(0, 2), (1, 2), (2, 2), (0, 1)], [(0, 1), (1, 2), (2, 1), (0, 2)], [(0, 2), (1, 1), (2, 2), (0, 1)]],
    # Role 2 is absent from this dialogue: it must not count.
    [[(0, 2), (1, 3), (0, 1)], [(0, 3), (1, 1), (0, 1)], [(0, 1), (1, 2), (0, 2)]],
]


@pytest.mark.parametrize("variant", ["paper", "released"])
def test_two_party_loss_equals_numpy_eq_1_to_6(variant):
    encoder = _encoder()
    batch = _batch(TWO_PARTY)
    model = Dial2vecModel(encoder, negatives=2, temperature=0.2, window=1, loss_variant=variant)
    losses, metrics = model.per_example_loss(batch, training=False)
    expected, expected_metrics = _numpy_loss(encoder, batch, 3, 2, 1, 0.2, variant)
    np.testing.assert_allclose(losses.numpy(), expected, rtol=1e-4, atol=1e-5)
    assert sorted(metrics) == sorted(expected_metrics)
    for name, values in expected_metrics.items():
        np.testing.assert_allclose(metrics[name].numpy(), values, rtol=1e-6, err_msg=name)


def test_three_party_loss_without_window():
    encoder = _encoder()
    batch = _batch(THREE_PARTY, seed=1)
    model = Dial2vecModel(encoder, negatives=2, temperature=0.5, window=None, num_roles=3)
    losses, _ = model.per_example_loss(batch, training=False)
    expected, _ = _numpy_loss(encoder, batch, 3, 3, None, 0.5, "paper")
    np.testing.assert_allclose(losses.numpy(), expected, rtol=1e-4, atol=1e-5)


def test_a_dialogue_cut_before_the_second_speaker_adds_no_loss():
    """A positive cut at --max_length inside the first speaker's turn: its negatives that replace
    the absent speaker's turns are the positive itself, and the one speaking has no counterpart.
    Neither interlocutor counts (loss 0); the uncut dialogue beside it keeps its Eq. 5 loss."""
    cut = [[(0, 5)], [(0, 5)], [(0, 2), (1, 3)], [(1, 4)]]
    encoder = _encoder()
    batch = _batch([TWO_PARTY[1], cut], seed=2)
    model = Dial2vecModel(encoder, negatives=2, temperature=0.2, window=1)
    losses, metrics = model.per_example_loss(batch, training=False)
    expected, _ = _numpy_loss(encoder, batch, 3, 2, 1, 0.2, "paper")
    assert expected[1] == 0.0 and expected[0] > 0.0
    np.testing.assert_allclose(losses.numpy(), expected, rtol=1e-4, atol=1e-5)
    assert metrics["positive_first_per_role"].numpy()[1] == 0.0 == metrics["positive_first_every_role"].numpy()[1]


def _numpy_dialogue_contrast(encoder, batch, samples, temperature):
    """The dialogue-level ablation by hand: mean over each sample's tokens, cosine with the
    dialogue's own mean (no dropout: the second encoding equals the first), NT-Xent over S."""
    losses, first = [], []
    for example in range(batch["samples"].shape[0]):
        ids, mask = batch["samples"][example, :samples], batch["samples_mask"][example, :samples]
        states = encoder({"input_word_ids": ids, "input_mask": mask})["sequence_output"].numpy().astype(np.float64)
        means = np.stack([states[s][mask[s] > 0].mean(axis=0) for s in range(samples)])
        cosines = means @ means[0] / (np.linalg.norm(means, axis=1) * np.linalg.norm(means[0]))
        logits = cosines / temperature
        losses.append(np.log(np.exp(logits).sum()) - logits[0])
        first.append(float(np.all(cosines[1:] < cosines[0])))
    return np.array(losses), np.array(first)


@pytest.mark.parametrize("batch", [TWO_PARTY, THREE_PARTY[:1]])
def test_dialogue_contrast_equals_numpy(batch):
    """--dial2vec_contrast=dialogue: without dropout the positive's cosine is 1 and the loss is
    -log e^{1/τ} / Σ_j e^{cos(d, s_j)/τ}; "released" divides it by the samples."""
    encoder = _encoder()
    batch = _batch(batch, seed=2)
    model = Dial2vecModel(encoder, negatives=2, temperature=0.2, num_roles=3, contrast="dialogue")
    losses, metrics = model.per_example_loss(batch, training=False)
    expected, first = _numpy_dialogue_contrast(encoder, batch, 3, 0.2)
    np.testing.assert_allclose(losses.numpy(), expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(metrics["positive_first"].numpy(), first)
    np.testing.assert_allclose(metrics["positive_cosine"].numpy(), 1.0, atol=1e-5)
    released = Dial2vecModel(encoder, negatives=2, temperature=0.2, num_roles=3, contrast="dialogue",
                             loss_variant="released")
    np.testing.assert_allclose(released.per_example_loss(batch, training=False)[0].numpy(), expected / 3,
                               rtol=1e-4, atol=1e-5)


def test_dialogue_contrast_draws_its_positive_from_a_second_dropout_mask():
    """Training with dropout: the anchor is another encoding of the dialogue, so the positive's
    cosine falls below 1 (the SimCSE positive) while the loss stays finite."""
    tf.keras.utils.set_random_seed(5)
    encoder = Encoder(CONFIG.replace(hidden_dropout=0.3)).build_variables()
    model = Dial2vecModel(encoder, negatives=2, contrast="dialogue")
    losses, metrics = model.per_example_loss(_batch(TWO_PARTY), training=True)
    assert np.all(metrics["positive_cosine"].numpy() < 1 - 1e-4)
    assert np.all(np.isfinite(losses.numpy()))
    with pytest.raises(ValueError, match="unknown dial2vec contrast"):
        Dial2vecModel(encoder, contrast="utterance")


def test_gradients_reach_only_unfrozen_variables_and_the_role_turn_tables():
    encoder = _encoder(role_vocab_size=2, turn_vocab_size=3)
    encoder.freeze_bottom(1)
    model = Dial2vecModel(encoder, negatives=3, role_turn_embeddings=True)
    with tf.GradientTape() as tape:
        losses, _ = model.per_example_loss(_batch(TWO_PARTY), training=True)
        loss = tf.reduce_mean(losses)
    trainable = model.trainable_variables
    grads = dict(zip([v.name for v in trainable], tape.gradient(loss, trainable)))
    frozen = {v.name for v in encoder.variables} - set(grads)
    assert any("word_embeddings" in n for n in frozen) and any("transformer/layer_0/" in n for n in frozen)
    assert not any("transformer/layer_1/" in n for n in frozen)
    missing = sorted(n for n, g in grads.items() if g is None)
    assert all("pooler" in n for n in missing), missing  # the pooler is not part of the loss
    assert grads[encoder.extra_embeddings["role_ids"].embeddings.name] is not None
    assert grads[encoder.extra_embeddings["turn_ids"].embeddings.name] is not None
    assert np.isfinite(loss.numpy())


def test_turn_and_role_ids_past_the_tables_share_their_last_rows():
    encoder = _encoder(role_vocab_size=2, turn_vocab_size=3)
    model = Dial2vecModel(encoder, role_turn_embeddings=True)
    ids = tf.constant([[2, 20, 21, 22, 23]])
    mask = tf.ones_like(ids)
    roles = tf.constant([[0, 0, 1, 1, 0]])
    far = model.encode(ids, mask, tf.constant([[0, 0, 1, 5, 9]]), roles)
    last = model.encode(ids, mask, tf.constant([[0, 0, 1, 2, 2]]), roles)
    plain = Dial2vecModel(encoder).encode(ids, mask, tf.constant([[0, 0, 1, 2, 2]]), roles)
    np.testing.assert_allclose(far.numpy(), last.numpy(), atol=1e-6)
    assert np.abs(far.numpy() - plain.numpy()).max() > 1e-3  # the tables are used


def test_embeddings_equal_numpy_pooling():
    encoder = _encoder()
    model = Dial2vecModel(encoder)
    batch = _batch([[[(0, 2), (1, 3), (0, 1)]], [[(1, 1), (0, 2)]], [[(0, 3)]]])
    ids, mask = batch["samples"][:, 0], batch["samples_mask"][:, 0]
    turns, roles = batch["samples_turn_ids"][:, 0], batch["samples_role_ids"][:, 0]
    states = encoder({"input_word_ids": ids, "input_mask": mask})["sequence_output"].numpy()
    for n in range(3):
        valid = mask[n] > 0
        per_role = [states[n][valid & (roles[n] == r)].mean(0) if (valid & (roles[n] == r)).any()
                    else np.zeros(states.shape[-1]) for r in range(2)]
        expected = {"interlocutor": per_role[0] + per_role[1], "mean": states[n][valid].mean(0),
                    "cls": states[n, 0], "p1": per_role[0], "p2": per_role[1]}
        for pooling, value in expected.items():
            got = model.embed(ids, mask, turns, roles, pooling=pooling).numpy()[n]
            np.testing.assert_allclose(got, value, atol=1e-5, err_msg=pooling)
    with pytest.raises(ValueError, match="unknown dial2vec pooling"):
        model.embed(ids, mask, turns, roles, pooling="max")


def test_bad_configuration_and_batches():
    encoder = _encoder()
    with pytest.raises(ValueError, match="unknown dial2vec loss_variant"):
        Dial2vecModel(encoder, loss_variant="other")
    with pytest.raises(ValueError, match="role_vocab_size and turn_vocab_size"):
        Dial2vecModel(encoder, role_turn_embeddings=True)
    with pytest.raises(ValueError, match="window must be non-negative"):
        Dial2vecModel(encoder, window=-1)
    with pytest.raises(ValueError, match="num_roles >= 2"):
        Dial2vecModel(encoder, num_roles=1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="fewer negatives"):
        Dial2vecModel(encoder, negatives=4).per_example_loss(_batch(TWO_PARTY), training=False)
    with pytest.raises(tf.errors.InvalidArgumentError, match="max_roles <= num_roles"):
        Dial2vecModel(encoder, negatives=2).per_example_loss(_batch(THREE_PARTY), training=False)


def test_two_replicas_give_the_losses_and_gradients_of_one_device(two_replicas):
    """Global batch 4: two replicas of 2 dialogues each vs one device of 4; the loop averages the
    per-example losses over the global batch, so the all-reduced gradients must match."""
    batch = _batch(TWO_PARTY + TWO_PARTY[::-1], seed=4)
    with two_replicas.scope():
        model = Dial2vecModel(_encoder(role_vocab_size=2, turn_vocab_size=3), negatives=3, window=1,
                              role_turn_embeddings=True)

    def step(local):
        with tf.GradientTape() as tape:
            losses, metrics = model.per_example_loss(local, training=False)
            loss = tf.reduce_sum(losses) / 4
        grads = tape.gradient(loss, model.trainable_variables)
        return losses, metrics["positive_first_every_role"], [tf.zeros_like(v) if g is None else tf.convert_to_tensor(g)
                                             for g, v in zip(grads, model.trainable_variables)]

    one_losses, one_accuracy, one_grads = step(batch)
    dataset = two_replicas.experimental_distribute_dataset(tf.data.Dataset.from_tensors(batch))
    losses, accuracy, grads = two_replicas.run(step, args=(next(iter(dataset)),))
    gather = lambda value: np.concatenate(two_replicas.experimental_local_results(value))  # noqa: E731
    np.testing.assert_allclose(gather(losses), one_losses.numpy(), rtol=1e-5)
    np.testing.assert_array_equal(gather(accuracy), one_accuracy.numpy())
    assert len(grads) == len(one_grads) == len(model.trainable_variables)
    for two, one in zip(grads, one_grads):
        summed = two_replicas.reduce(tf.distribute.ReduceOp.SUM, two, axis=None)
        # Each replica cuts its rows to its own lengths (`Encoder.encode_by_length`), so sums over
        # key positions run in another order: float32 rounding, not another gradient.
        np.testing.assert_allclose(summed.numpy(), one.numpy(), atol=5e-6)
