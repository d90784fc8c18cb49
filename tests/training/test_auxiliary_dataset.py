"""The training command's auxiliary-dataset hook (CCL's NLI pairs): extra keys merged into every
per-replica batch before the resume skip, so a resumed run continues both streams exactly."""
import re

import numpy as np
import pytest
import tensorflow as tf

from training_flags import training_flags
from tiny_corpus import corpus
from tfdialemb.dialogue import write_dialogues
from tfdialemb.methods.models.base import Method
from tfdialemb.methods.spec import MethodSpec
from tfdialemb.training import cli

BATCH = 4


def _dicts(**columns):
    return tf.data.Dataset.from_tensor_slices(columns).batch(2)


def test_merge_adds_the_next_auxiliary_batch_to_each_batch():
    main = _dicts(x=np.arange(6), x_mask=np.ones(6, np.int32))
    extra = _dicts(y=np.arange(100, 108))
    merged = list(cli.merge_auxiliary(main, extra))
    assert len(merged) == 3  # as long as the shorter stream
    assert [sorted(b) for b in merged] == [["x", "x_mask", "y"]] * 3
    np.testing.assert_array_equal(np.concatenate([b["x"] for b in merged]), np.arange(6))
    np.testing.assert_array_equal(np.concatenate([b["y"] for b in merged]), np.arange(100, 106))


def test_merge_refuses_keys_the_main_batches_already_have():
    with pytest.raises(ValueError, match=r"reuse the keys \['x'\]"):
        cli.merge_auxiliary(_dicts(x=np.arange(4)), _dicts(x=np.arange(4), y=np.arange(4)))


class AuxiliaryProbe(Method):
    """Reports which auxiliary batch each step saw and the keys of its batches; its one weight,
    not the encoder, carries the loss, so a step costs almost nothing."""

    def __init__(self, encoder, **kwargs):
        super().__init__(encoder, **kwargs)
        self.weight = self.add_weight(name="probe", shape=[], initializer="ones")
        self.keys_seen = set()

    def per_example_loss(self, batch, training):
        self.keys_seen.update(batch)  # at trace time
        aux_step = tf.cast(batch["aux_step"], tf.float32)
        rows = tf.fill(tf.shape(aux_step), tf.cast(tf.shape(batch["before"])[0], tf.float32))
        metrics = {"aux_step": aux_step, "rows": rows,
                   "aux_rows": tf.cast(batch["aux_rows"], tf.float32)}
        return tf.square(self.weight) * batch["target"], metrics


def _flags(tmp_path, hf_dir, max_steps, strategy):
    return training_flags(train_file=str(tmp_path / "train.jsonl"), model_dir=str(tmp_path / strategy),
                          init_checkpoint=hf_dir, max_steps=max_steps, batch_size=BATCH, max_length=16,
                          strategy=strategy)


def _counting(context, tokenizer):
    """Auxiliary batch n (from 0) is filled with n; `aux_rows` is the batch's own size."""
    del tokenizer
    size = context.get_per_replica_batch_size(BATCH)
    return tf.data.Dataset.range(10 ** 6).map(
        lambda n: {"aux_step": tf.fill([size], n), "aux_rows": tf.fill([size], size)})


class ProbeSpec(MethodSpec):
    """The probe on `ccl` windows of 3, fed the counting auxiliary stream."""

    name = "auxiliary_probe"
    builder = "ccl"

    def __init__(self):
        self.models = []

    def builder_params(self, params):
        return {"window": 3}

    def make_model(self, encoder, params):
        self.models.append(AuxiliaryProbe(encoder))
        return self.models[-1]

    def auxiliary(self, params, run):
        return _counting


def _train(tmp_path, hf_dir, monkeypatch, capsys, max_steps, strategy):
    """`cli.run` with the counting auxiliary; (last step, its scalars, the model's batch keys)."""
    write_dialogues(corpus(n=16, seed=4), str(tmp_path / "train.jsonl"))
    monkeypatch.setattr(cli, "FLAGS", _flags(tmp_path, hf_dir, max_steps, strategy))
    spec = ProbeSpec()
    assert cli.run(spec, {}) == 0
    line = re.search(r"trained to step (\d+) of \d+: (.*)", capsys.readouterr().out)
    scalars = dict((k, float(v)) for k, v in (item.split(" ") for item in line.group(2).split(", ")))
    return int(line.group(1)), scalars, spec.models[-1].keys_seen


MERGED_KEYS = {"before", "before_mask", "after", "after_mask", "target", "aux_step", "aux_rows"}


def test_a_resumed_run_skips_the_merged_stream(tmp_path, hf_safetensors_dir, monkeypatch, capsys):
    for max_steps in (2, 3):  # the second run resumes from ckpt-2
        step, scalars, keys = _train(tmp_path, hf_safetensors_dir, monkeypatch, capsys, max_steps,
                                     "default")
        assert step == max_steps and keys == MERGED_KEYS
        # Step n (from 1) took auxiliary batch n - 1, also after the restart.
        assert scalars["aux_step"] == max_steps - 1
        assert scalars["rows"] == BATCH and scalars["aux_rows"] == BATCH


def test_every_replica_gets_its_own_auxiliary_batch(tmp_path, hf_safetensors_dir, two_replicas,
                                                    monkeypatch, capsys):
    monkeypatch.setattr(cli.distribute, "make_strategy", lambda name, devices, timeout: two_replicas)
    step, scalars, keys = _train(tmp_path, hf_safetensors_dir, monkeypatch, capsys, 2, "mirrored")
    assert step == 2 and keys == MERGED_KEYS
    # One input pipeline feeds both replicas in turn: step 2 takes batches 2 and 3, each of the
    # per-replica size 2, beside main batches of 2 rows.
    assert scalars["aux_step"] == 2.5
    assert scalars["rows"] == BATCH // 2 and scalars["aux_rows"] == BATCH // 2
