"""A resume refused because the settings changed names only the settings that differ, not the two
whole records."""
import pytest
from tiny_corpus import TOKENIZER, corpus

from tfdialemb.data.build import BuildOptions
from tfdialemb.data.examples import make_builder
from tfdialemb.dialogue import ErrorPolicy, write_dialogues
from tfdialemb.method_record import setting_differences, write_method_config
from tfdialemb.training import data


def test_differences_are_named_key_by_key():
    there = {"method": "mge", "params": {"turns": 3, "temperature": 0.1, "negatives": 9}, "builder": {"a": [1]}}
    now = {"method": "mge", "params": {"turns": 3, "temperature": 0.2, "negatives": 9, "new": True},
           "builder": {"a": [1, 2]}}
    assert setting_differences(there, now) == ["params.temperature: 0.1 there, 0.2 now",
                                               "params.new: None there, True now", "builder.a: [1] there, [1, 2] now"]
    assert setting_differences(there, there) == []


def test_a_model_directory_refuses_other_options_naming_only_them(tmp_path):
    config = {"format_version": 1, "method": "mge", "params": {"turns": 3, "temperature": 0.1, "negatives": 9},
              "builder": {"method": "mge"}, "preprocessing": {"max_length": 32}, "encoder_options": {},
              "training": {"learning_rate": 1e-4}, "inference": {}}
    write_method_config(str(tmp_path), config)
    write_method_config(str(tmp_path), {**config, "training": {"learning_rate": 1e-5}})  # may change on resume
    with pytest.raises(ValueError) as refused:
        write_method_config(str(tmp_path), {**config, "params": {**config["params"], "temperature": 0.05}})
    assert "(params.temperature: 0.1 there, 0.05 now); use a new --model_dir" in str(refused.value)
    assert "turns" not in str(refused.value)


def test_a_model_directory_refuses_another_freezing(tmp_path):
    config = {"format_version": 1, "method": "mge", "params": {"turns": 3}, "builder": {"method": "mge"},
              "preprocessing": {"max_length": 32}, "encoder_options": {},
              "training": {"learning_rate": 1e-4, "freeze_layers": 1}, "inference": {}}
    write_method_config(str(tmp_path), config)
    with pytest.raises(ValueError) as refused:
        write_method_config(str(tmp_path), {**config, "training": {"learning_rate": 1e-5, "freeze_layers": 0}})
    assert str(refused.value) == (f"{tmp_path}: holds a model trained otherwise (training.freeze_layers: 1 there, "
                                  "0 now); use a new --model_dir, or the same flags to resume")


def test_a_built_data_directory_refuses_another_seed_naming_only_it(tmp_path):
    write_dialogues(corpus(n=8, seed=1), str(tmp_path / "train.jsonl"))
    builder = make_builder("mge", {"negatives": 2})
    options = BuildOptions(max_length=16, num_shards=1, seed=0)
    data.prepare(str(tmp_path / "train.jsonl"), str(tmp_path / "data"), builder, TOKENIZER, options, ErrorPolicy())
    with pytest.raises(ValueError) as refused:
        data.prepare(str(tmp_path / "train.jsonl"), str(tmp_path / "data"), builder, TOKENIZER,
                     BuildOptions(max_length=16, num_shards=1, seed=1), ErrorPolicy())
    assert str(refused.value) == (f"{tmp_path / 'data'}: holds examples built otherwise (seed: 0 there, 1 now); "
                                  "use a new --model_dir (or the same flags to resume)")


def test_another_training_file_is_named_as_another_source_not_as_a_changed_file(tmp_path):
    write_dialogues(corpus(n=8, seed=1), str(tmp_path / "train.jsonl"))
    write_dialogues(corpus(n=8, seed=2), str(tmp_path / "other.jsonl"))
    builder = make_builder("mge", {"negatives": 2})
    options = BuildOptions(max_length=16, num_shards=1, seed=0)
    data.prepare(str(tmp_path / "train.jsonl"), str(tmp_path / "data"), builder, TOKENIZER, options, ErrorPolicy())
    with pytest.raises(ValueError) as refused:
        data.prepare(str(tmp_path / "other.jsonl"), str(tmp_path / "data"), builder, TOKENIZER, options,
                     ErrorPolicy())
    assert str(refused.value) == (f"{tmp_path / 'data'}: holds examples built otherwise (source: "
                                  f"{tmp_path / 'train.jsonl'} there, {tmp_path / 'other.jsonl'} now); "
                                  "use a new --model_dir (or the same flags to resume)")
