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


def test_a_model_directory_refuses_another_batch_size(tmp_path):
    config = {"format_version": 1, "method": "mge", "params": {"turns": 3}, "builder": {"method": "mge"},
              "preprocessing": {"max_length": 32}, "encoder_options": {},
              "training": {"learning_rate": 1e-4, "freeze_layers": 1, "batch_size": 20}, "inference": {}}
    write_method_config(str(tmp_path), config)
    write_method_config(str(tmp_path), {**config, "training": {**config["training"], "learning_rate": 1e-5}})
    with pytest.raises(ValueError) as refused:
        write_method_config(str(tmp_path), {**config, "training": {**config["training"], "batch_size": 16}})
    assert str(refused.value) == (f"{tmp_path}: holds a model trained otherwise (training.batch_size: 20 there, "
                                  "16 now); use a new --model_dir, or the same flags to resume")


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


def test_a_model_directory_refuses_an_init_checkpoint_of_other_shapes(tmp_path, monkeypatch, capsys,
                                                                      hf_safetensors_dir):
    import json

    import tiny_bert
    from training_flags import training_flags

    from tfdialemb.methods.spec import get_method
    from tfdialemb.training import cli

    model_dir = tmp_path / "model"  # as a run of a 48-wide encoder leaves it, checkpoints recorded
    model_dir.mkdir()
    tiny_bert.write_vocab(str(model_dir))
    (model_dir / "checkpoint").write_text('model_checkpoint_path: "ckpt-2"\n', encoding="utf-8")
    wide = {"vocab_size": len(tiny_bert.WORDS), "hidden_size": 48, "num_layers": 2, "num_attention_heads": 4,
            "intermediate_size": 40, "max_position_embeddings": 64}
    (model_dir / "tfdialemb_encoder.json").write_text(json.dumps({"format_version": 1, "encoder": wide}),
                                                      encoding="utf-8")
    (tmp_path / "train.jsonl").write_text("", encoding="utf-8")  # refused before it is read
    monkeypatch.setattr(cli, "FLAGS", training_flags(train_file=str(tmp_path / "train.jsonl"),
                                                     model_dir=str(model_dir), init_checkpoint=hf_safetensors_dir))
    spec = get_method("mge")
    assert cli.run(spec, spec.resolve({})) == 2
    # tiny_bert.HF_CONFIG: 32 wide, intermediate size 37.
    assert capsys.readouterr().err.strip() == (
        f"error: {model_dir}: holds checkpoints of another encoder than {hf_safetensors_dir}'s (hidden_size: 48 "
        "there, 32 now; intermediate_size: 40 there, 37 now); use a new --model_dir, or the --init_checkpoint it "
        "was trained from to resume")


def test_a_resume_with_other_options_is_refused_before_its_data_is_built(tmp_path, monkeypatch, capsys,
                                                                        hf_safetensors_dir):
    import json

    from training_flags import training_flags

    from tfdialemb.methods.spec import get_method
    from tfdialemb.training import cli

    write_dialogues(corpus(n=8, seed=1), str(tmp_path / "train.jsonl"))
    model_dir = tmp_path / "model"  # as a run with --temperature=0.05 leaves it
    model_dir.mkdir()
    spec = get_method("mge")
    recorded = {"format_version": 1, "method": "mge", "params": dict(spec.resolve({"temperature": 0.05})),
                "builder": {"method": "mge"}, "preprocessing": {"max_length": 32}, "encoder_options": {},
                "training": {"freeze_layers": 0, "batch_size": 4, "bucket_by_length": False}, "inference": {}}
    (model_dir / "method.json").write_text(json.dumps(recorded), encoding="utf-8")
    monkeypatch.setattr(cli, "FLAGS", training_flags(train_file=str(tmp_path / "train.jsonl"),
                                                     model_dir=str(model_dir), init_checkpoint=hf_safetensors_dir,
                                                     freeze_layers=0))
    assert cli.run(spec, spec.resolve({})) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: {model_dir}: holds a model trained otherwise (params.temperature: 0.05 there, 0.1 now); use a new "
        "--model_dir, or the same flags to resume")
    assert sorted(p.name for p in model_dir.iterdir()) == ["method.json"]  # no data built, nothing else written


def test_a_model_directory_refuses_a_shard_directory_rebuilt_from_another_corpus(tmp_path):
    from tfdialemb.data.build import build
    from tfdialemb.core.files import file_sha256
    from tfdialemb.method_record import method_config
    from tfdialemb.methods.spec import get_method

    spec = get_method("mge")
    params = spec.resolve({"negatives": 2})
    builder = make_builder("mge", {"negatives": 2})
    records = []
    for seed, name in ((0, "train.jsonl"), (3, "other.jsonl")):  # the same --train_file=shards, rebuilt
        write_dialogues(corpus(n=8, seed=seed + 1), str(tmp_path / name))
        manifest = build(str(tmp_path / name), str(tmp_path / f"shards{seed}"), builder, TOKENIZER,
                         BuildOptions(max_length=16, num_shards=1, seed=seed), ErrorPolicy())
        records.append((file_sha256(str(tmp_path / name)), manifest["counts"]["examples"],
                        method_config(spec, params, manifest, TOKENIZER, {}, {"freeze_layers": 0},
                                      spec.inference_settings(params))))
    (first_sha, first_examples, first), (other_sha, other_examples, other) = records
    write_method_config(str(tmp_path / "model"), first)
    write_method_config(str(tmp_path / "model"), first)  # the same build resumes
    with pytest.raises(ValueError) as refused:
        write_method_config(str(tmp_path / "model"), other)
    assert (first_examples, other_examples) == (29, 35)  # one per turn of corpus(n=8, seed=1) and of seed=4
    assert str(refused.value) == (
        f"{tmp_path / 'model'}: holds a model trained otherwise (data.source_sha256: {first_sha} there, {other_sha} "
        "now; data.seed: 0 there, 3 now; data.examples: 29 there, 35 now); use a new --model_dir, or the same "
        "flags to resume")


def test_a_record_from_before_an_option_existed_resumes_at_its_default(tmp_path):
    """method.json written before dial2vec gained --dial2vec_contrast lacks the option: the run
    was trained as its default trains, so a resume at the default is accepted and another value is
    refused, naming the option."""
    import json

    from tfdialemb.method_record import FORMAT_VERSION, METHOD_CONFIG, check_method_config
    from tfdialemb.methods.spec import get_method

    spec = get_method("dial2vec")
    now = {"format_version": FORMAT_VERSION, "method": "dial2vec", "params": dict(spec.resolve({}))}
    older = {**now, "params": {k: v for k, v in now["params"].items() if k != "dial2vec_contrast"}}
    (tmp_path / METHOD_CONFIG).write_text(json.dumps(older))
    with pytest.raises(ValueError, match="params.dial2vec_contrast: None there, interlocutor now"):
        check_method_config(str(tmp_path), now)
    check_method_config(str(tmp_path), now, spec.from_record)
    other = {**now, "params": dict(spec.resolve({"dial2vec_contrast": "dialogue"}))}
    with pytest.raises(ValueError, match="params.dial2vec_contrast: interlocutor there, dialogue now"):
        check_method_config(str(tmp_path), other, spec.from_record)
