"""A model directory opened for inference releases its model when its block ends: evaluating
several models one after another holds one at a time; one whose training saved no checkpoint
says so."""
import weakref

from tfdialemb.model_dir import ModelSource, load_method


def test_the_loaded_encoder_is_freed_when_the_block_ends(hf_safetensors_dir):
    with ModelSource(hf_safetensors_dir) as source:
        encoder = weakref.ref(source.pretrained.encoder)
        assert encoder() is not None
    assert encoder() is None
    assert source.pretrained.encoder is not None  # loaded again on next use


def test_a_record_written_under_the_former_kind_name_reads_as_the_curved_kind(tmp_path):
    import json

    from tfdialemb.method_record import METHOD_CONFIG, read_method_config, recorded_settings

    settings = {"curved": "c3l", "speaker_tokens": False, "pooling": "mean", "max_length": 64,
                "merge_consecutive_turns": True}
    (tmp_path / METHOD_CONFIG).write_text(json.dumps({
        "format_version": 1, "method": "c3l", "preprocessing": {"merge_consecutive_turns": True},
        "inference": {"triple": settings, "sentence": {"pooling": "mean", "max_length": 64}}}), encoding="utf-8")
    config = read_method_config(str(tmp_path))
    assert sorted(config["inference"]) == ["curved", "sentence"]
    assert recorded_settings(config, "curved") == settings


def test_a_record_written_under_the_former_layout_name_reads_as_pair_layout(tmp_path):
    import json

    from tfdialemb.method_record import METHOD_CONFIG, read_method_config, recorded_settings
    from tfdialemb.methods.spec import get_method

    (tmp_path / METHOD_CONFIG).write_text(json.dumps({
        "format_version": 1, "method": "fgc", "params": {"fgc_input": "ums", "aug_strength": 0.1},
        "preprocessing": {"merge_consecutive_turns": True},
        "inference": {"selection": {"fgc_input": "ums", "max_length": 64}}}), encoding="utf-8")
    config = read_method_config(str(tmp_path))
    assert recorded_settings(config, "selection") == {"pair_layout": "ums", "max_length": 64}
    params = get_method("fgc").from_record(config["params"])
    assert (params.pair_layout, params.aug_strength) == ("ums", 0.1)


def test_a_directory_whose_training_saved_no_checkpoint_says_so(tmp_path):
    import json

    import pytest

    from tfdialemb.encoders import CheckpointError
    from tfdialemb.method_record import METHOD_CONFIG

    (tmp_path / METHOD_CONFIG).write_text(json.dumps({
        "format_version": 1, "method": "mge", "params": {}, "preprocessing": {"merge_consecutive_turns": True},
        "inference": {"sentence": {"pooling": "mean", "max_length": 32}}}), encoding="utf-8")
    (tmp_path / "data").mkdir()  # what a run stopped before its first checkpoint leaves
    with pytest.raises(CheckpointError) as refused:
        load_method(str(tmp_path))
    assert str(refused.value) == (f"{tmp_path}: its mge training run has saved no checkpoint yet; rerun its "
                                  "training command to train it")


def _record(directory, method, inference):
    import json

    from tfdialemb.method_record import METHOD_CONFIG

    (directory / METHOD_CONFIG).write_text(json.dumps({
        "format_version": 1, "method": method, "params": {}, "preprocessing": {"merge_consecutive_turns": True},
        "inference": inference}), encoding="utf-8")
    return ModelSource(str(directory))


def test_a_model_is_not_used_with_inputs_its_training_never_gave_it(tmp_path):
    """A dial2vec model embeds no sentences, as `export --kind=sentence` refuses; a sentence model
    scored on curved texts gets them without the [O] / [E] speaker tokens it never saw."""
    import pytest

    (tmp_path / "dial2vec").mkdir()
    dial2vec = _record(tmp_path / "dial2vec", "dial2vec", {"dialogue": {"separator": "sep", "num_roles": 2}})
    with pytest.raises(ValueError) as refused:
        dial2vec.settings("sentence", {})
    assert str(refused.value) == f"{tmp_path / 'dial2vec'}: a dial2vec model serves dialogue, not sentence embeddings"
    (tmp_path / "mge").mkdir()
    mge = _record(tmp_path / "mge", "mge", {"sentence": {"pooling": "mean", "max_length": 32}})
    assert mge.settings("curved", {})["speaker_tokens"] is False
    with pytest.raises(ValueError, match="--speaker_tokens=true contradicts .*, trained with speaker_tokens=false"):
        mge.settings("curved", {"speaker_tokens": True})
    assert ModelSource(str(tmp_path / "untrained")).settings("curved", {})["speaker_tokens"] is True
