"""Named options: one declaration per hyper-parameter or inference setting, turned into absl flags.

A method declares its options once (`tfdialemb.methods.spec`); `train`, `evaluate` and `export`
define their flags from those declarations, so a flag shared by several commands (e.g.
`--separator`) has one definition, one type and one set of choices everywhere.

A `Switch` is an option whose values are `paper` and `released`: the paper's equations by
default, the authors' released code where it differs (docs/methods/overview.md, "Paper vs released code").
"""
import dataclasses
import math
from typing import Any, Container, Dict, List, Optional, Sequence, Tuple

from absl import flags

PAPER, RELEASED = "paper", "released"
RENAMED_FLAGS = {"fgc_input": "pair_layout"}
"""Former option names: on the command line, in a flagfile and in a model directory's `method.json`
they are read as the new name for one release (the flag with a warning)."""


@dataclasses.dataclass(frozen=True)
class Option:
    """One named value; its type is its default's type (bool, int, float, str), or `list`: a tuple
    of strings as default, comma-separated on the command line."""

    name: str
    default: Any
    help: str
    choices: Tuple[str, ...] = ()
    lower_bound: Optional[float] = None
    kind: Optional[type] = None
    upper_bound: Optional[float] = None

    def __post_init__(self):
        if self.kind is None:
            if self.default is None:
                raise ValueError(f"option {self.name!r}: a None default needs an explicit kind")
            object.__setattr__(self, "kind", type(self.default))
        object.__setattr__(self, "choices", tuple(self.choices))
        if self.choices and self.default is not None and self.default not in self.choices:
            raise ValueError(f"option {self.name!r}: default {self.default!r} is not one of {self.choices}")

    def define(self, help_text: Optional[str] = None, flag_values=flags.FLAGS) -> None:
        """Defines the absl flag `--name` (its default is this option's)."""
        text = help_text or self.help
        if self.choices:
            flags.DEFINE_enum(self.name, self.default, list(self.choices), text, flag_values=flag_values)
        elif self.kind is bool:
            flags.DEFINE_bool(self.name, self.default, text, flag_values=flag_values)
        elif self.kind is int:
            flags.DEFINE_integer(self.name, self.default, text, lower_bound=self.lower_bound,
                                 upper_bound=self.upper_bound, flag_values=flag_values)
        elif self.kind is float:
            flags.DEFINE_float(self.name, self.default, text, lower_bound=self.lower_bound,
                               upper_bound=self.upper_bound, flag_values=flag_values)
        elif self.kind is str:
            flags.DEFINE_string(self.name, self.default, text, flag_values=flag_values)
        elif self.kind is list:
            flags.DEFINE_list(self.name, list(self.default), text, flag_values=flag_values)
        else:
            raise TypeError(f"option {self.name!r}: unsupported kind {self.kind}")

    def same_flag_as(self, other: "Option") -> bool:
        """Whether one flag can serve both declarations (defaults may differ per method)."""
        return (self.name, self.kind, self.choices, self.lower_bound, self.upper_bound) == (
            other.name, other.kind, other.choices, other.lower_bound, other.upper_bound)


@dataclasses.dataclass(frozen=True)
class Switch(Option):
    """A paper-vs-released choice: `paper` and `released` say what each value does."""

    paper: str = ""
    released: str = ""

    def __post_init__(self):
        if not self.choices:
            object.__setattr__(self, "choices", (PAPER, RELEASED))
        super().__post_init__()
        if PAPER not in self.choices or RELEASED not in self.choices:
            raise ValueError(f"switch {self.name!r} must offer {PAPER!r} and {RELEASED!r}")
        if not (self.paper and self.released):
            raise ValueError(f"switch {self.name!r} must say what {PAPER} and {RELEASED} do")


def define_all(declarations: Sequence[Tuple[str, Option]], flag_values=flags.FLAGS) -> None:
    """Defines one flag per option name from (owner, option) declarations, the owners named in its
    help; declarations sharing a name must agree on the flag. Where their defaults differ, the
    flag's default is None (each owner applies its own) and the help lists them."""
    by_name: Dict[str, List[Tuple[str, Option]]] = {}
    for owner, option in declarations:
        by_name.setdefault(option.name, []).append((owner, option))
    for name, declared in by_name.items():
        first = declared[0][1]
        for _, option in declared[1:]:
            if not option.same_flag_as(first):
                raise ValueError(f"option {name!r} is declared twice with different types or "
                                 f"choices: {first} and {option}")
        owners = ", ".join(owner for owner, _ in declared)
        defaults = {owner: option.default for owner, option in declared}
        if len(set(defaults.values())) == 1:
            first.define(f"{owners}: {first.help}", flag_values)
        else:
            listed = ", ".join(f"{owner} {value}" for owner, value in defaults.items())
            dataclasses.replace(first, default=None).define(
                f"{owners}: {first.help} Defaults: {listed}.", flag_values)


def non_finite_floats(flag_values=flags.FLAGS) -> List[str]:
    """`--name=value` of every float flag (single or multi, an Option's or a plain absl one) that
    holds NaN or an infinity. absl's bounds compare false with NaN, so a bound alone lets
    `--learning_rate=nan` through to a run that trains NaN weights; `tfdialemb.core.cli.parse_flags`
    refuses what this finds, for every command."""
    found, seen = [], set()
    for name in flag_values:
        flag = flag_values[name]
        if id(flag) in seen or not isinstance(flag.parser, flags.FloatParser) or flag.value is None:
            continue
        seen.add(id(flag))
        values = flag.value if isinstance(flag.value, list) else [flag.value]
        if not all(math.isfinite(value) for value in values):
            found.append(f"--{flag.name}={','.join(str(value) for value in values)}")
    return found


def renamed(former: str, current: str) -> str:
    """The warning for a name given in its former spelling (`--kind=triple`, `--fgc_input`)."""
    return f"{former} is now {current}; the old name will be refused in the next release"


def current_flag_names(args: Sequence[str], defined: Container[str]) -> Tuple[List[str], List[str]]:
    """`args` with each flag named in RENAMED_FLAGS (`--old`, `--old=v`, `-old=v`) whose new name is
    `defined` under that name, and the former names it met; arguments after `--` are not flags.
    A command without the new flag leaves the old name to absl, which refuses it as unknown."""
    rewritten, former = [], []
    for index, arg in enumerate(args):
        if arg == "--":
            return rewritten + list(args[index:]), former
        dashes = "--" if arg.startswith("--") else "-" if arg.startswith("-") else ""
        name, equals, value = arg[len(dashes):].partition("=")
        if dashes and RENAMED_FLAGS.get(name) in defined:
            former.append(name)
            arg = f"{dashes}{RENAMED_FLAGS[name]}{equals}{value}"
        rewritten.append(arg)
    return rewritten, former


def current_option_names(values: Dict[str, Any]) -> Dict[str, Any]:
    """`values` (recorded options or settings) with each former name in RENAMED_FLAGS renamed."""
    return {RENAMED_FLAGS.get(name, name): value for name, value in values.items()}
