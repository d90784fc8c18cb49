"""The error of an unreadable checkpoint, importable without TensorFlow (the commands name it in
their one-line refusals before any model is touched)."""


class CheckpointError(ValueError):
    """A checkpoint directory is missing files or holds weights that do not fit the config."""
