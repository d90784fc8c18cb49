"""The flags every evaluation-set builder of data_prep shares: the dialogues it reads, the set it
writes, and --overwrite."""
from absl import flags

from tfdialemb.core import options
from tfdialemb.core.cli import OVERWRITE

flags.disclaim_key_flags()  # the flags below belong to the builder that defines them: its --help lists them


def define_input_output(input_help: str, output_help: str) -> None:
    """Defines the required --input and --output flags and --overwrite."""
    flags.DEFINE_string("input", None, input_help)
    flags.DEFINE_string("output", None, output_help)
    OVERWRITE.define()
    flags.adopt_module_key_flags(options)
    flags.mark_flags_as_required(["input", "output"])
