"""One dialogue gets the same token, turn and role ids on every path: the training build, and the
dialogue embedder that evaluation and export use, set from a trained model directory's record."""

import numpy as np
import pytest
import tensorflow as tf

from training_flags import training_flags
from tiny_corpus import TOKENIZER
from tfdialemb.data.build import BuildOptions, build
from tfdialemb.data.examples import make_builder
from tfdialemb.data.pipeline import make_dataset
from tfdialemb.dialogue import Dialogue, Turn, role_ids, write_dialogues
from tfdialemb.dialogue_embedder import DialogueEmbedder
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
    from tfdialemb.encoders import Encoder, EncoderConfig
    import tiny_bert

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
    assert settings == {"separator": "eou", "num_roles": 2, "max_length": 24, "merge_consecutive_turns": True}
    embedder = DialogueEmbedder.from_settings(source.pretrained.encoder, source.pretrained.tokenizer, settings)
    for a, b in zip(_built_positive(tmp_path / "check", merge=True), _packed(embedder)):
        np.testing.assert_array_equal(a, b)
