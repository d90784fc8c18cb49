"""The values the layers take as options, importable without TensorFlow: the methods' options
offer them as the commands' flag defaults before any model is touched."""

DEFAULT_WINDOW = 10
"""Interlocutor matching: the turn window w of dial2vec's correlation matrices (Eq. 2; its training
script and the paper: 10)."""
