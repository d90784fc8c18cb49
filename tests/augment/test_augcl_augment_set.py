"""`--method=augcl --augment_set=NAME` on a plain dialogue file: the run writes the augmented file
the augment command writes for the same set, models, flags and seed (a second code path), into the
run's data directory, and reuses it while the input and flags stay the same."""
import os

import pytest

from tfdialemb.augment import flags as augment_flags
from tfdialemb.augment.command import augment_to
from tfdialemb.dialogue import Dialogue, Turn, write_dialogues
from tfdialemb.inference.kinds import load
from tfdialemb.methods.spec import TrainingRun, get_method


def _dialogue(i, turns):
    return Dialogue(f"d{i}", tuple(Turn("user" if t % 2 == 0 else "system", f"turn {t} of dialogue {i} about the hotel room")
                                   for t in range(turns)), {"domain": "hotel"})


@pytest.fixture
def plain_file(tmp_path):
    path = tmp_path / "plain.jsonl"
    write_dialogues([_dialogue(0, 7), _dialogue(1, 3), _dialogue(2, 12)], str(path))
    return str(path)


def test_the_run_writes_the_augment_commands_file_once(plain_file, tmp_path, random_mlm_dir):
    spec = get_method("augcl")
    params = spec.resolve({"augment_set": "a-l-m-dse", "fill_mask_model": random_mlm_dir,
                           "sentence_encoder": random_mlm_dir, "mask_rate": 0.3, "min_fill_prob": 0.0})
    run = TrainingRun(init_checkpoint=random_mlm_dir, batch_size=4, max_length=64, seed=3, load_model=load)
    data_dir = str(tmp_path / "run" / "data")
    written = spec.training_file(plain_file, data_dir, params, run)
    assert written == os.path.join(f"{data_dir}-augmented", "augmented-a-l-m-dse.jsonl")
    assert not os.path.exists(data_dir)  # left for the build, which makes it whole

    given = {name: params[name] for name in augment_flags.flag_names()}
    expected = str(tmp_path / "by_command.jsonl")
    counts = augment_to(plain_file, expected, "a-l-m-dse", given, load, seed=3)
    with open(written, encoding="utf-8") as a, open(expected, encoding="utf-8") as b:
        assert a.read() == b.read()
    assert counts["original"] == 3 and counts["crop"] >= 1  # d0 and d2 can be cropped

    modified = os.stat(written).st_mtime_ns
    assert spec.training_file(plain_file, data_dir, params, run) == written
    assert os.stat(written).st_mtime_ns == modified  # kept, not written again
    reseeded = TrainingRun(init_checkpoint=random_mlm_dir, batch_size=4, max_length=64, seed=4, load_model=load)
    spec.training_file(plain_file, data_dir, params, reseeded)
    assert os.stat(written).st_mtime_ns != modified  # another seed augments afresh


def test_without_a_set_the_file_is_read_as_given(plain_file, tmp_path):
    spec = get_method("augcl")
    run = TrainingRun(init_checkpoint="", batch_size=4, max_length=64, seed=0)
    assert spec.training_file(plain_file, str(tmp_path / "data"), spec.resolve({}), run) == plain_file


def test_a_missing_model_is_named_before_any_work(plain_file, tmp_path):
    spec = get_method("augcl")
    run = TrainingRun(init_checkpoint="", batch_size=4, max_length=64, seed=0)
    with pytest.raises(ValueError, match="--fill_mask_model is missing"):
        spec.training_file(plain_file, str(tmp_path / "data"), spec.resolve({"augment_set": "t-l"}), run)
    assert not os.path.exists(tmp_path / "data" / "augmented-t-l.jsonl")


def test_on_the_fly_follows_the_set_unless_given_and_a_contradiction_is_warned_about():
    """Thesis Table 1: the "-m" sets mix the on-the-fly transforms, t-l, t-h and a-h do not."""
    spec = get_method("augcl")
    run = TrainingRun(init_checkpoint="", batch_size=4, max_length=64, seed=0)
    mixed = {name: spec.resolve({"augment_set": name})["on_the_fly"]
             for name in ("t-l", "t-h", "a-h", "a-l-m", "a-h-m", "a-l-m-dse")}
    assert mixed == {"t-l": False, "t-h": False, "a-h": False, "a-l-m": True, "a-h-m": True, "a-l-m-dse": True}
    assert spec.resolve({})["on_the_fly"] is True
    assert spec.check(spec.resolve({"augment_set": "t-l"}), run) == []
    assert any("does not mix the on-the-fly transforms" in w
               for w in spec.check(spec.resolve({"augment_set": "t-l", "on_the_fly": True}), run))
    assert spec.builder_params(spec.resolve({"augment_set": "a-h"}))["min_views"] == 1
