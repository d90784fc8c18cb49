"""A method's options resolve to a typed, frozen config (`MethodSpec.config_type`) read by attribute
or by name, which `method.json` records as the same plain dictionary of option values."""
import dataclasses
import json

import pytest

from tfdialemb.methods.spec import MethodConfig, all_specs, get_method


def test_every_method_resolves_to_its_own_frozen_config_of_its_options():
    for spec in all_specs() + all_specs("pretrain"):
        config = spec.resolve()
        assert isinstance(config, MethodConfig) and dataclasses.is_dataclass(config), spec.name
        assert type(config).__name__.endswith("Config")
        names = [option.name for option in spec.options]
        assert list(config) == names and len(config) == len(names)
        for option in spec.options:
            assert getattr(config, option.name) == config[option.name] == option.default, (spec.name, option.name)
        field_types = {field.name: field.type for field in dataclasses.fields(config)}
        assert field_types == {option.name: option.kind for option in spec.options}


def test_a_config_reads_by_attribute_and_name_and_cannot_change():
    spec = get_method("mge")
    config = spec.resolve({"temperature": 0.05})
    assert config.temperature == config["temperature"] == 0.05
    assert config.get("no_such_option", "absent") == "absent" and "temperature" in config
    with pytest.raises(KeyError):
        config["no_such_option"]  # pylint: disable=pointless-statement
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.temperature = 0.1
    with pytest.raises(ValueError, match="has no options"):
        spec.resolve({"no_such_option": 1})


def test_a_config_is_recorded_as_the_plain_dictionary_of_its_values():
    spec = get_method("fgc")
    given = {"temperature": 1.0, "cvc_similarity": "dot"}
    expected = {option.name: given.get(option.name, option.default) for option in spec.options}
    config = spec.resolve(given)
    assert config == expected and dict(config) == expected
    assert json.loads(json.dumps(dict(config))) == json.loads(json.dumps(expected))
    assert spec.resolve(dict(config)) == config  # a resumed run given the same flags


def test_every_method_rebuilds_the_config_its_model_directory_records():
    """`method.json` records every option, so rebuilding a model reads them all back, including
    those a variant leaves unused (flags `resolve` refuses when given together)."""
    for spec in all_specs() + all_specs("pretrain"):
        recorded = json.loads(json.dumps(dict(spec.resolve())))
        assert spec.from_record(recorded) == spec.resolve(), spec.name
    mge = get_method("mge")
    released = json.loads(json.dumps(dict(mge.resolve({"mge_variant": "released"}))))
    with pytest.raises(ValueError, match="do\\(es\\) not apply"):
        mge.resolve(released)  # the flags: --temperature with the released variant is refused
    assert mge.from_record(released).mge_variant == "released"
    assert mge.from_record({"mge_variant": "released"}) == mge.resolve({"mge_variant": "released"})
    with pytest.raises(ValueError, match="another version"):
        mge.from_record({"no_such_option": 1})
