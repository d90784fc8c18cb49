"""Which operations each set of the thesis' Table 1 builds, from which models, and the error that
names every missing model before anything is loaded."""
import types

import pytest

from tfdialemb.augment import operations
from tfdialemb.augment.base import Augmentation, Chain
from tfdialemb.augment.crop import StageCrop
from tfdialemb.augment.presets import PRESETS, get_preset
from tfdialemb.augment.shuffle import StageShuffle
from topic_source import TopicSource

# Thesis Table 1 (and a-h-m of Table 3): insert, replace, translate, crop, shuffle per set.
TABLE_1 = {
    "t-l": ("insert", "replace"),
    "t-h": ("insert", "replace", "translate"),
    "a-h": ("insert", "replace", "translate", "crop", "shuffle"),
    "a-l-m": ("insert", "replace", "crop", "shuffle"),
    "a-h-m": ("insert", "replace", "translate", "crop", "shuffle"),
    "a-l-m-dse": ("insert", "replace", "crop", "shuffle"),
}


class Recorded(Augmentation):
    built = []

    def __init__(self, model, seed=0, **settings):
        super().__init__(seed)
        self.model, self.settings = model, settings
        Recorded.built.append(self)


@pytest.fixture
def fakes(monkeypatch, tmp_path):
    """Stand-ins for the model-backed operations and the similarity models' loader; model directories."""
    Recorded.built = []
    loaded = []
    for name in ("insert", "replace", "translate"):
        real = operations.OPERATIONS[name]
        monkeypatch.setitem(operations.OPERATIONS, name,
                            type(real.__name__, (Recorded,), {"name": name, "needs": real.needs}))
    monkeypatch.setattr(operations, "shared_model", lambda flag, value: loaded.append((flag, value)) or value)

    def load_model(path, kind, given=None):
        loaded.append((kind, path, given))
        return TopicSource() if kind == "context_response" else types.SimpleNamespace(directory=path)

    models = {}
    for name in ("fill_mask", "en_ru", "ru_en", "context_response", "dse"):
        (tmp_path / name).mkdir()
        models[name] = str(tmp_path / name)
    paths = {"fill_mask_model": models["fill_mask"], "translation_models": [models["en_ru"], models["ru_en"]],
             "context_response_model": models["context_response"], "sentence_encoder": None}
    return types.SimpleNamespace(loaded=loaded, models=models, paths=paths, load_model=load_model)


@pytest.mark.parametrize("name", sorted(TABLE_1))
def test_each_set_builds_its_operations_from_its_models(fakes, name):
    paths = dict(fakes.paths)
    if name.endswith("-dse"):
        paths["context_response_model"], paths["sentence_encoder"] = None, fakes.models["dse"]
    built = operations.build_operations(get_preset(name), paths, fakes.load_model, seed=4)
    assert built.names == TABLE_1[name]
    assert all(op.seed == 4 for op in built.operations)
    for op in built.operations:
        if op.name in ("insert", "replace"):
            assert op.model == fakes.models["fill_mask"]
        elif op.name == "translate":
            assert op.model == [fakes.models["en_ru"], fakes.models["ru_en"]]
        else:
            assert isinstance(op, {"crop": StageCrop, "shuffle": StageShuffle}[op.name])
            assert op.similarity is built.similarity  # one similarity, its embeddings shared
    fill_mask = [("fill_mask_model", fakes.models["fill_mask"])]  # one model serves insert and replace
    translation = [("translation_models", [fakes.models["en_ru"], fakes.models["ru_en"]])] * ("translate" in TABLE_1[name])
    expected = fill_mask + translation + ([] if "crop" not in TABLE_1[name] else (
        [("sentence", fakes.models["dse"], {"pooling": "mean"})] if name.endswith("-dse")
        else [("context_response", fakes.models["context_response"], None)]))
    assert sorted(map(repr, fakes.loaded)) == sorted(map(repr, expected))


def test_every_preset_is_in_table_1():
    assert {name: preset.operations for name, preset in PRESETS.items()} == TABLE_1


def test_settings_reach_the_constructors_and_none_keeps_their_defaults(fakes):
    built = operations.build_operations(
        get_preset("a-l-m"), fakes.paths, fakes.load_model, settings={"insert": {"mask_rate": 0.3, "min_fill_prob": None},
                                                    "crop": {"keep": 0.5, "min_turns": None}})
    insert, replace, crop, shuffle = built.operations
    assert insert.settings == {"mask_rate": 0.3} and replace.settings == {}
    assert (crop.keep, crop.min_turns, shuffle.min_turns) == (0.5, 6, 12)


def test_missing_models_are_all_named_before_anything_is_built(fakes, tmp_path):
    paths = {"fill_mask_model": None, "translation_models": [str(tmp_path / "nowhere")],
             "context_response_model": None, "sentence_encoder": None}
    with pytest.raises(ValueError) as error:
        operations.build_operations(get_preset("a-h"), paths, fakes.load_model)
    message = str(error.value)
    assert message.startswith("--set=a-h (insert, replace, translate, crop, shuffle): ")
    assert "--fill_mask_model is missing: a checkpoint with a masked-LM head" in message
    assert "--translation_models needs 2 directories, got 1" in message
    assert f"--translation_models={tmp_path / 'nowhere'}: no such directory" in message
    assert "--context_response_model is missing: the auxiliary context-response model" in message
    assert Recorded.built == [] and fakes.loaded == []


def test_the_other_similarity_model_is_refused(fakes):
    paths = dict(fakes.paths, sentence_encoder=fakes.models["dse"])
    with pytest.raises(ValueError, match="--sentence_encoder is not used by --set=a-l-m.*a-l-m-dse"):
        operations.check_models(get_preset("a-l-m"), paths)
    operations.check_models(get_preset("t-l"), paths)  # no crop or shuffle: nothing to confuse


def test_set_seed_reaches_chained_operations(fakes):
    built = operations.build_operations(get_preset("t-l"), fakes.paths, fakes.load_model)
    chain = operations.OperationSet((Chain(list(built.operations)),))
    chain.set_seed(9)
    assert [op.seed for op in chain.operations[0].operations] == [9, 9]
    assert chain.operations[0].seed == 9


def test_every_operation_of_the_presets_has_a_class_needing_one_thing():
    assert {name: cls.needs for name, cls in operations.OPERATIONS.items()} == {
        "insert": ("fill_mask_model",), "replace": ("fill_mask_model",), "translate": ("translation_models",),
        "crop": ("similarity",), "shuffle": ("similarity",)}
    assert (operations.OPERATIONS["crop"], operations.OPERATIONS["shuffle"]) == (StageCrop, StageShuffle)
