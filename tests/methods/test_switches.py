"""One convention for paper-vs-released switches: `--<method>_<aspect>` with the values `paper` and
`released`, the paper by default, each said in words, and one table of the methods' documentation
(docs/methods/overview.md, "Paper vs released code") listing exactly them, the methods' training
switches and the evaluations' ones."""
import os
import re

from tfdialemb.baselines.switches import EVALUATION_SWITCHES
from tfdialemb.methods.spec import all_specs
from tfdialemb.core.options import PAPER, RELEASED, Switch

METHODS_DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                           "docs", "methods", "overview.md")


def _switches():
    training = {option.name: (spec.name, option) for spec in all_specs()
                for option in spec.options if isinstance(option, Switch)}
    return {**training, **{switch.name: ("evaluate", switch) for switch in EVALUATION_SWITCHES}}


def test_every_switch_follows_the_convention():
    switches = _switches()
    assert switches
    names = {spec.name for spec in all_specs()}
    for name, (method, switch) in switches.items():
        assert any(name.startswith(f"{method_name}_") for method_name in names), \
            f"--{name} does not start with a method name"
        assert {PAPER, RELEASED} <= set(switch.choices) and switch.default == PAPER, name
        assert switch.paper and switch.released, name


def test_the_documented_table_lists_exactly_the_registered_switches():
    with open(METHODS_DOC, encoding="utf-8") as f:
        text = f.read()
    start = text.index("\n## Paper vs released code\n")
    end = text.find("\n## ", start + 1)
    table = text[start:end if end != -1 else len(text)]
    assert sorted(re.findall(r"^\| `--(\w+)` \|", table, re.M)) == sorted(_switches())
