"""The flags every evaluation-set builder of data_prep shares: the dialogues it reads, the set it
writes, and --overwrite."""
from absl import flags

from tfdialemb.cli import OVERWRITE


def define_input_output(input_help: str, output_help: str) -> None:
    """Defines the required --input and --output flags and --overwrite."""
    flags.DEFINE_string("input", None, input_help)
    flags.DEFINE_string("output", None, output_help)
    OVERWRITE.define()
    flags.mark_flags_as_required(["input", "output"])
