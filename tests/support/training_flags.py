"""The parsed flags `tfdialemb.training.cli.run` reads, as `python -m tfdialemb.train` would set
them, for tests that run training in-process (monkeypatch `cli.FLAGS` with them); float32 rather
than the command's auto precision, so results compare with float32 references on any machine.
`train_one_step` makes a tiny trained model directory with them."""
import types

DEFAULTS = dict(
    train_file=None, model_dir=None, init_checkpoint=None, max_steps=2, num_epochs=None, batch_size=4,
    learning_rate=1e-3, lr_schedule="constant", warmup_fraction=0.0, weight_decay=0.0, freeze_layers=0,
    max_length=24, seed=0, checkpoint_every=100, log_every=1, num_shards=1, merge_consecutive_turns=True,
    min_turns=2, pool_dialogues=100_000, validate_task="sr", validate_file=None, validate_every=None,
    validate_label_key="domain", validate_mixed_precision="float32",
    strategy="default", devices=None, collective_timeout=900, mixed_precision="float32", jit_compile=False,
    bucket_by_length=False)


def training_flags(**values):
    unknown = sorted(set(values) - set(DEFAULTS))
    if unknown:
        raise TypeError(f"no training flags {unknown}")
    return types.SimpleNamespace(**{**DEFAULTS, **values})


def train_one_step(root, hf_dir, monkeypatch, name, **params):
    """`root/name`: method `name` with `params` trained for one step of 2 examples of 32 tokens from
    `hf_dir` on `root/train.jsonl`, in-process (`cli.FLAGS` patched through `monkeypatch`)."""
    from tfdialemb.methods.spec import get_method
    from tfdialemb.training import cli

    model_dir = root / name
    monkeypatch.setattr(cli, "FLAGS", training_flags(
        train_file=str(root / "train.jsonl"), model_dir=str(model_dir), init_checkpoint=hf_dir, max_steps=1,
        batch_size=2, learning_rate=1e-4, max_length=32, checkpoint_every=10))
    spec = get_method(name)
    assert cli.run(spec, spec.resolve(params)) == 0
    return model_dir
