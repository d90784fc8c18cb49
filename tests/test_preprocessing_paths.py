"""One dialogue gets the same token, turn and role ids on every path: the training build, and the
dialogue embedder that evaluation and export use, set from a trained model directory's record."""
import dataclasses

import numpy as np
import pytest
import tensorflow as tf
from tiny_corpus import TOKENIZER
from training_flags import training_flags

from tfdialemb.data.build import BuildOptions, build
from tfdialemb.data.examples import make_builder
from tfdialemb.data.pipeline import make_dataset
from tfdialemb.dialogue import Dialogue, Turn, role_ids, write_dialogues
from tfdialemb.inference.dialogue_embedder import DialogueEmbedder
from tfdialemb.methods.spec import get_method
from tfdialemb.model_dir import ModelSource
from tfdialemb.training import cli

# Two runs of one speaker and a third speaker: merging changes the turns, capping the roles.
DIALOGUE = Dialogue("d0", (Turn("a", "hello world"), Turn("a", "good morning"), Turn("b", "how are you"),
                           Turn("c", "fine thanks"), Turn("b", "book a taxi"), Turn("b", "please")))
FILLER = Dialogue("d1", (Turn("x", "need a hotel"), Turn("x", "the cafe")))
"""One speaker: no dial2vec example of its own, only utterances for the negatives."""


def _built_positive(tmp_path, merge):
    """(ids, turn ids, role ids) of DIALOGUE as the dial2vec build stores its positive sample."""
    write_dialogues([DIALOGUE, FILLER], str(tmp_path / "train.jsonl"))
    build(str(tmp_path / "train.jsonl"), str(tmp_path / "built"),
          make_builder("dial2vec", {"negatives": 1, "max_roles": 2}), TOKENIZER,
          BuildOptions(max_length=24, num_shards=1, merge_consecutive_turns=merge, min_turns=1,
                       dialogue_separator="[EOU]"))
    batches = list(make_dataset(str(tmp_path / "built"), 1, training=False))
    assert len(batches) == 1
    mask = batches[0]["samples_mask"][0, 0].numpy() > 0
    return tuple(batches[0][f"samples{suffix}"][0, 0].numpy()[mask] for suffix in ("", "_turn_ids", "_role_ids"))


def _packed(embedder):
    inputs = embedder.pack_batch(tf.ragged.constant([[t.text for t in DIALOGUE.turns]]),
                                 tf.ragged.constant([role_ids(DIALOGUE)], tf.int32))
    mask = inputs.mask[0].numpy() > 0
    return tuple(value[0].numpy()[mask] for value in (inputs.ids, inputs.turn_ids, inputs.role_ids))


@pytest.mark.parametrize("merge", [True, False])
def test_build_and_embedder_give_the_same_ids(tmp_path, merge):
    import tiny_bert

    from tfdialemb.encoders import Encoder, EncoderConfig

    encoder = Encoder(EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG)).build_variables()
    embedder = DialogueEmbedder(encoder, TOKENIZER, max_length=24, separator="[EOU]", num_roles=2,
                                merge_consecutive_turns=merge)
    built, packed = _built_positive(tmp_path, merge), _packed(embedder)
    for name, a, b in zip(("ids", "turn ids", "role ids"), built, packed):
        np.testing.assert_array_equal(a, b, err_msg=name)
    # By hand: merged, turns are "a a" | b | c | "b b", roles 0 1 1 1 (c folds into role 1).
    turns = 4 if merge else 6
    assert built[1].max() == turns - 1
    assert list(np.unique(built[2])) == [0, 1]


def test_a_trained_directory_sets_the_embedder_as_training_built(tmp_path, hf_safetensors_dir, monkeypatch):
    """Training merged consecutive turns; the embedder made from the model directory does too,
    with the recorded separator and roles, and no flag repeated."""
    write_dialogues([Dialogue(f"{d.id}-{i}", d.turns) for i in range(3) for d in (DIALOGUE, FILLER)],
                    str(tmp_path / "train.jsonl"))
    monkeypatch.setattr(cli, "FLAGS", training_flags(
        train_file=str(tmp_path / "train.jsonl"), model_dir=str(tmp_path / "model"),
        init_checkpoint=hf_safetensors_dir, max_steps=1, batch_size=2, learning_rate=1e-4, min_turns=1,
        checkpoint_every=10))
    spec = get_method("dial2vec")
    assert cli.run(spec, spec.resolve({"negatives": 1, "separator": "eou"})) == 0
    source = ModelSource(str(tmp_path / "model"))
    settings = source.settings("dialogue", {})
    assert settings == {"separator": "eou", "num_roles": 2, "max_length": 24, "merge_consecutive_turns": True,
                        "speaker_prefix": False, "final_separator": False, "dialogue_pooling": "interlocutor"}
    embedder = DialogueEmbedder.from_settings(source.pretrained.encoder, source.pretrained.tokenizer, settings)
    for a, b in zip(_built_positive(tmp_path / "check", merge=True), _packed(embedder)):
        np.testing.assert_array_equal(a, b)


AUGCL_DIALOGUE = Dialogue("a0", (Turn("user", "hello world"), Turn("agent", "good morning"), Turn("user", "how are you")),
                          {"source_id": "a0", "augmentations": []})
AUGCL_IDS = [TOKENIZER.token_id(w) for w in ("[CLS]", "[UNK]", "hello", "world", "[SEP]", "1", "good", "morning",
                                             "[SEP]", "[UNK]", "how", "are", "you", "[SEP]")]
"""By hand, the released "0 hello world[SEP]1 good morning[SEP]0 how are you" in [CLS] ... [SEP]
("0" is not in the tiny vocabulary)."""


def test_augcl_training_embedder_and_export_feed_the_hand_built_ids(tmp_path):
    """The original as training packs it (precomputed pairs: side 0 is the whole dialogue), as the
    dialogue embedder set from augcl's recorded settings packs it, and as the exported SavedModel
    embeds it: the [CLS] state of the encoder on the hand-built ids."""
    import tiny_bert

    from tfdialemb.augment.base import augmented
    from tfdialemb.encoders import Encoder, EncoderConfig
    from tfdialemb.kind_registry import resolve
    from tfdialemb.methods.spec import TrainingRun
    from tfdialemb.serving.dialogue import dialogue_inputs, export_dialogue_model

    view = dataclasses.replace(augmented(AUGCL_DIALOGUE, AUGCL_DIALOGUE.turns[1:], "crop"), id="a0/crop")
    write_dialogues([AUGCL_DIALOGUE, view], str(tmp_path / "augmented.jsonl"))
    spec = get_method("augcl")
    params = spec.resolve({"on_the_fly": False})
    build(str(tmp_path / "augmented.jsonl"), str(tmp_path / "built"),
          make_builder(spec.builder, spec.builder_params(params)), TOKENIZER, BuildOptions(max_length=24, num_shards=1))
    stored = make_dataset(str(tmp_path / "built"), 1, training=False)
    turns = next(iter(stored))  # the dialogue, then its view, kept as turns with their roles
    assert turns["dialogues_turn_counts"].numpy().tolist() == [[3, 2]]
    assert turns["dialogues_roles"].numpy().tolist() == [[0, 1, 0, 1, 0]]
    batch = next(iter(spec.batches(stored, TOKENIZER, params, TrainingRun("", 1, 24, 0))))
    assert batch["dialogues"][0, 0].numpy()[batch["dialogues_mask"][0, 0].numpy() > 0].tolist() == AUGCL_IDS

    recorded = {**spec.inference_settings(params)["dialogue"], "max_length": 24, "merge_consecutive_turns": True}
    settings, _ = resolve("dialogue", recorded, {}, "method.json")
    encoder = Encoder(EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG)).build_variables()
    embedder = DialogueEmbedder.from_settings(encoder, TOKENIZER, settings)
    inputs = embedder.pack_batch(tf.ragged.constant([[t.text for t in AUGCL_DIALOGUE.turns]]),
                                 tf.ragged.constant([role_ids(AUGCL_DIALOGUE)], tf.int32))
    assert inputs.ids[0].numpy()[inputs.mask[0].numpy() > 0].tolist() == AUGCL_IDS

    served = tf.saved_model.load(export_dialogue_model(embedder, str(tmp_path / "export"), [AUGCL_DIALOGUE]))
    inputs = dialogue_inputs([AUGCL_DIALOGUE])
    embedding = served.signatures["serving_default"](
        turns=tf.constant(inputs["turns"]), turn_counts=tf.constant(inputs["turn_counts"]),
        speakers=tf.constant(inputs["speakers"]))["embeddings"]
    ids = tf.constant([AUGCL_IDS])
    cls_state = encoder({"input_word_ids": ids, "input_mask": tf.ones_like(ids)})["sequence_output"][:, 0]
    np.testing.assert_allclose(embedding.numpy(), cls_state.numpy(), atol=1e-5)
