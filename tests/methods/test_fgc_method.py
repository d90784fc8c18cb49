"""FGC on packed four-view batches: the loss recomputed in numpy from the encoder's [CLS] states
by Eq. 1-5, one sequence at a time; the views the pipeline packs from a build, against texts
packed by hand."""
import numpy as np
import pytest
import tensorflow as tf

import tiny_bert
from tfdialemb.data.build import BuildOptions, build
from tfdialemb.data.examples import make_builder
from tfdialemb.data.pipeline import make_dataset
from tfdialemb.dialogue import Dialogue, Turn, write_dialogues
from tfdialemb.encoders import Encoder, EncoderConfig
from tfdialemb.methods.fgc import FgcSpec
from tfdialemb.methods.models.fgc import FineGrainedContrastModel
from tfdialemb.methods.spec import TrainingRun
from tiny_corpus import TOKENIZER


def _batch(rng, contexts=3, length=7, vocab=60):
    ids = rng.integers(5, vocab, [contexts, 4, length]).astype(np.int32)
    lengths = rng.integers(3, length + 1, [contexts, 4])
    mask = (np.arange(length) < lengths[..., None]).astype(np.int32)
    segments = (np.arange(length) >= (lengths[..., None] // 2)).astype(np.int32) * mask
    return {"pair_ids": ids * mask, "pair_mask": mask, "pair_segments": segments}


def _encoder():
    config = EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG).replace(hidden_dropout=0.0, attention_dropout=0.0)
    return Encoder(config).build_variables()


def _cls(encoder, batch):
    """[C, 4, H]: the last layer's first state of each pair, one unpadded sequence at a time."""
    out = np.zeros(batch["pair_ids"].shape[:2] + (tiny_bert.HF_CONFIG["hidden_size"],))
    for c in range(out.shape[0]):
        for v in range(4):
            n = batch["pair_mask"][c, v].sum()
            states = encoder({"input_word_ids": batch["pair_ids"][c, v, None, :n],
                              "input_mask": batch["pair_mask"][c, v, None, :n],
                              "input_type_ids": batch["pair_segments"][c, v, None, :n]})["sequence_output"]
            out[c, v] = states.numpy()[0, 0]
    return out


def _log_softmax(x):
    x = x - x.max()
    return x - np.log(np.exp(x).sum())


def _mean_pairwise_cosine(vectors):
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    n = len(unit)
    return sum(unit[i] @ unit[j] for i in range(n) for j in range(n) if i != j) / (n * (n - 1))


def _expected(model, cls, reduction, similarity, anchors, select_on_augmented):
    """Per-context losses and the batch's diagnostics, loop by loop from the [CLS] states."""
    w, b = (v.numpy() for v in model.selection.weights)
    logits = (cls @ w + b)[..., 0]
    labels = np.array([1, 1, 0, 0])
    bce = np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))
    selection = bce.mean(axis=1) if select_on_augmented else bce[:, [0, 2]].mean(axis=1)
    (w1, b1), (w2, b2) = [[v.numpy() for v in layer.weights] for layer in model.projection.layers]
    z = np.maximum(cls @ w1 + b1, 0) @ w2 + b2
    tau, n = 0.5, cls.shape[0]
    pairs = {"original": ((0, 1), (2, 3)), "all": ((0, 1), (1, 0), (2, 3), (3, 2))}[anchors]
    ivc = np.zeros(n)
    for i in range(n):  # Eq. 2-3: l(anchor, partner) over the other three views of the context
        unit = z[i] / np.linalg.norm(z[i], axis=1, keepdims=True)
        for anchor, partner in pairs:
            others = [k for k in range(4) if k != anchor]
            row = _log_softmax(np.array([unit[anchor] @ unit[k] / tau for k in others]))
            ivc[i] -= row[others.index(partner)]
    flat, classes = z.reshape(4 * n, -1), np.tile(labels, n)
    if similarity == "cosine":
        flat = flat / np.linalg.norm(flat, axis=1, keepdims=True)
    cvc = np.zeros(4 * n)
    for a in range(4 * n):  # Eq. 4-5
        others = [r for r in range(4 * n) if r != a]
        row = _log_softmax(np.array([flat[a] @ flat[r] / tau for r in others]))
        same = [j for j, r in enumerate(others) if classes[r] == classes[a]]
        cvc[a] = -row[same].sum() / len(same)
    cvc = cvc.reshape(n, 4).sum(axis=1)
    diagnostics = {"cls_cosine": _mean_pairwise_cosine(cls.reshape(4 * n, -1)),
                   "z_cosine": _mean_pairwise_cosine(z.reshape(4 * n, -1)),
                   "z_norm": np.linalg.norm(z.reshape(4 * n, -1), axis=1).mean()}
    if reduction == "sum":  # the loop's mean over N contexts then gives Σ_i
        return selection + n * ivc + n * cvc, diagnostics
    return selection + ivc / len(pairs) + cvc / 4, diagnostics


@pytest.mark.parametrize("reduction,similarity,anchors,select_on_augmented", [
    ("sum", "dot", "original", False), ("mean", "cosine", "original", True), ("mean", "cosine", "all", False)])
def test_loss_is_eq_1_to_5_recomputed_from_the_cls_states(reduction, similarity, anchors, select_on_augmented):
    """The literal reading (sums, raw dot product), the defaults and the symmetric IVC, each against a
    loop-by-loop numpy re-derivation; the collapse diagnostics against their definitions."""
    batch = _batch(np.random.default_rng(0))
    tf.keras.utils.set_random_seed(3)
    model = FineGrainedContrastModel(_encoder(), reduction=reduction, cvc_similarity=similarity,
                                     ivc_anchors=anchors, select_on_augmented=select_on_augmented)
    losses, metrics = model.per_example_loss(batch, training=False)
    cls = _cls(model.encoder, batch)
    expected, diagnostics = _expected(model, cls, reduction, similarity, anchors, select_on_augmented)
    np.testing.assert_allclose(losses.numpy(), expected, rtol=2e-4, atol=1e-5)
    assert set(metrics) == {"selection_loss", "accuracy", "ivc", "cvc", "cls_cosine", "z_cosine", "z_norm"}
    for name, value in diagnostics.items():  # batch figures, one per context so the loop's mean is the figure
        np.testing.assert_allclose(metrics[name].numpy(), [value] * 3, rtol=1e-4, atol=1e-6)


def test_defaults_are_the_mean_over_anchors_and_cosine():
    model = FineGrainedContrastModel(_encoder())
    assert (model.reduction, model.cvc_similarity, model.ivc_anchors) == ("mean", "cosine", "original")
    params = FgcSpec().resolve({})
    assert (params["fgc_reduction"], params["cvc_similarity"], params["ivc_anchors"],
            params["aug_at_least_one"]) == ("mean", "cosine", "original", True)


def test_without_contrasts_only_the_original_pairs_are_encoded(monkeypatch):
    """--ivc_weight=0 --cvc_weight=0: two passes per context, the loss the selection loss of (c, r+)
    and (c, r−) recomputed in numpy; a four-view batch is refused."""
    four = _batch(np.random.default_rng(1))
    two = {name: value[:, [0, 2]] for name, value in four.items()}
    model = FineGrainedContrastModel(_encoder(), ivc_weight=0.0, cvc_weight=0.0)
    encoded = []
    cls_states = model.cls_states
    monkeypatch.setattr(model, "cls_states", lambda ids, *args: encoded.append(int(ids.shape[0])) or cls_states(ids, *args))
    losses, metrics = model.per_example_loss(two, training=False)
    assert encoded == [2 * 3]
    cls = _cls(model.encoder, four)[:, [0, 2]]
    w, b = (v.numpy() for v in model.selection.weights)
    logits = (cls @ w + b)[..., 0]
    bce = np.maximum(logits, 0) - logits * np.array([1, 0]) + np.log1p(np.exp(-np.abs(logits)))
    np.testing.assert_allclose(losses.numpy(), bce.mean(axis=1), rtol=1e-4)
    np.testing.assert_allclose(metrics["cls_cosine"].numpy(), [_mean_pairwise_cosine(cls.reshape(6, -1))] * 3,
                               rtol=1e-4)
    assert set(metrics) == {"selection_loss", "accuracy", "cls_cosine"}
    with pytest.raises(ValueError, match="reads 2 views per context, the batch holds 4"):
        model.per_example_loss(four, training=False)


def test_scores_are_the_sigmoid_of_the_selection_head():
    batch = _batch(np.random.default_rng(2))
    model = FineGrainedContrastModel(_encoder())
    flat = {k: v.reshape(-1, v.shape[-1]) for k, v in batch.items()}
    scores = model.scores(flat["pair_ids"], flat["pair_mask"], flat["pair_segments"]).numpy()
    w, b = (v.numpy() for v in model.selection.weights)
    expected = 1 / (1 + np.exp(-((_cls(model.encoder, batch) @ w + b)[..., 0])))
    np.testing.assert_allclose(scores, expected.reshape(-1), rtol=1e-4)


def _hand_packed(context, response, max_length=24):
    """The paper layout written out from the tokenizer, a second path to `pack_context_response`."""
    ids = [TOKENIZER.cls_id]
    for turn in context:
        ids += TOKENIZER.tokenize([turn]).to_list()[0] + [TOKENIZER.token_id("[EOT]")]
    first = len(ids) + 1
    ids += [TOKENIZER.sep_id] + TOKENIZER.tokenize([response]).to_list()[0] + [TOKENIZER.sep_id]
    assert len(ids) <= max_length
    return ids, [0] * first + [1] * (len(ids) - first)


@pytest.mark.parametrize("strength", [0.0, 1.0])
def test_the_pipeline_packs_the_four_views_of_each_stored_example(strength, tmp_path, hf_safetensors_dir):
    dialogues = [Dialogue("d0", (Turn("a", "hello world"), Turn("b", "how are you"), Turn("a", "fine thanks"))),
                 Dialogue("d1", (Turn("a", "book taxi please"), Turn("b", "need hotel")))]
    write_dialogues(dialogues, str(tmp_path / "train.jsonl"))
    build(str(tmp_path / "train.jsonl"), str(tmp_path / "built"), make_builder("fgc"), TOKENIZER,
          BuildOptions(max_length=24, num_shards=1))
    spec = FgcSpec()
    params = spec.resolve({"aug_strength": strength})
    dataset = make_dataset(str(tmp_path / "built"), 3, training=False)
    run = TrainingRun(hf_safetensors_dir, 3, 24, 0)
    batch = next(iter(spec.batches(dataset, TOKENIZER, params, run)))
    stored = next(iter(make_dataset(str(tmp_path / "built"), 3, training=False)))
    cut = [(["hello world"], "how are you"), (["hello world", "how are you"], "fine thanks"),
           (["book taxi please"], "need hotel")]
    for example, (context, positive) in enumerate(cut):
        for view in (0, 1, 2, 3):
            n = int(batch["pair_mask"][example, view].numpy().sum())
            row = batch["pair_ids"][example, view, :n].numpy().tolist()
            segments = batch["pair_segments"][example, view, :n].numpy().tolist()
            if view == 0:
                assert (row, segments) == _hand_packed(context, positive)
            if view == 2:
                stored_length = int(stored["negative_mask"][example].numpy().sum())
                negative = stored["negative"][example].numpy()[1:stored_length - 1].tolist()
                context_ids = _hand_packed(context, "")[0][:-1]  # [CLS] context [SEP]
                assert row == context_ids + negative + [TOKENIZER.sep_id]
            if strength == 0.0 and view in (1, 3):
                assert row == batch["pair_ids"][example, view - 1, :n].numpy().tolist()
    if strength == 1.0:
        changed = [bool(np.any(batch["pair_ids"][:, 1].numpy() != batch["pair_ids"][:, 0].numpy())),
                   bool(np.any(batch["pair_ids"][:, 3].numpy() != batch["pair_ids"][:, 2].numpy()))]
        assert any(changed)


def test_jieba_word_rows_are_packed_and_augmented_as_whole_words(tmp_path, hf_safetensors_dir):
    import jieba

    dialogues = [Dialogue("d0", (Turn("a", "你好"), Turn("b", "中文你好好中文"))),
                 Dialogue("d1", (Turn("a", "好"), Turn("b", "中文中文")))]
    write_dialogues(dialogues, str(tmp_path / "train.jsonl"))
    build(str(tmp_path / "train.jsonl"), str(tmp_path / "built"), make_builder("fgc", {"words": "jieba"}),
          TOKENIZER, BuildOptions(max_length=24, num_shards=1))
    spec = FgcSpec()
    params = spec.resolve({"aug_strength": 1.0, "fgc_words": "jieba"})
    words = [w for w in jieba.lcut("中文你好好中文") if w.strip()]
    assert len(words) > 1
    word_ids = [tuple(TOKENIZER.tokenize([w]).to_list()[0]) for w in words]
    for seed in range(6):
        batch = next(iter(spec.batches(make_dataset(str(tmp_path / "built"), 2, training=False), TOKENIZER, params,
                                       TrainingRun(hf_safetensors_dir, 2, 24, seed))))
        n = int(batch["pair_mask"][0, 0].numpy().sum())
        assert batch["pair_ids"][0, 0, :n].numpy().tolist() == _hand_packed(["你好"], "中文你好好中文")[0]
        m = int(batch["pair_mask"][0, 1].numpy().sum())
        augmented = batch["pair_ids"][0, 1, :m].numpy().tolist()
        response = augmented[augmented.index(TOKENIZER.sep_id) + 1:-1]
        at = 0  # the augmented response is a sequence of whole jieba words
        while at < len(response):
            word = next((w for w in word_ids if tuple(response[at:at + len(w)]) == w), None)
            assert word is not None, (response, word_ids)
            at += len(word)


def test_without_contrasts_the_pipeline_packs_the_original_pairs_only(tmp_path, hf_safetensors_dir, monkeypatch):
    """The two passes of each context are the four-view pipeline's (c, r+) and (c, r−); no synonym
    table is made and nothing is augmented."""
    dialogues = [Dialogue("d0", (Turn("a", "hello world"), Turn("b", "how are you"), Turn("a", "fine thanks"))),
                 Dialogue("d1", (Turn("a", "book taxi please"), Turn("b", "need hotel")))]
    write_dialogues(dialogues, str(tmp_path / "train.jsonl"))
    build(str(tmp_path / "train.jsonl"), str(tmp_path / "built"), make_builder("fgc"), TOKENIZER,
          BuildOptions(max_length=24, num_shards=1))
    spec, run = FgcSpec(), TrainingRun(hf_safetensors_dir, 2, 24, 0)
    four = next(iter(spec.batches(make_dataset(str(tmp_path / "built"), 2, training=False), TOKENIZER,
                                  spec.resolve({}), run)))
    monkeypatch.setattr("tfdialemb.methods.models.fgc.synonym_table", lambda *args: pytest.fail("synonyms made"))
    two = next(iter(spec.batches(make_dataset(str(tmp_path / "built"), 2, training=False), TOKENIZER,
                                 spec.resolve({"ivc_weight": 0.0, "cvc_weight": 0.0}), run)))
    assert two["pair_ids"].shape[:2] == [2, 2]
    for name in ("pair_ids", "pair_mask", "pair_segments"):
        original = four[name].numpy()[:, [0, 2]]
        width = two[name].shape[-1]
        np.testing.assert_array_equal(two[name].numpy(), original[..., :width])
        assert not original[..., width:].any()


def test_the_run_header_leaves_out_what_the_weights_switch_off():
    spec = FgcSpec()
    assert spec.unused_options(spec.resolve({})) == ()
    assert spec.unused_options(spec.resolve({"cvc_weight": 0.0})) == ("cvc_similarity",)
    assert set(spec.unused_options(spec.resolve({"ivc_weight": 0.0, "cvc_weight": 0.0}))) == {
        "ivc_anchors", "cvc_similarity", "temperature", "fgc_reduction", "aug_strength", "aug_at_least_one",
        "synonyms"}
    assert set(spec.unused_options(spec.resolve({"contrast_weight": 0.0, "select_on_augmented": True}))) == {
        "ivc_anchors", "cvc_similarity", "temperature", "fgc_reduction"}
