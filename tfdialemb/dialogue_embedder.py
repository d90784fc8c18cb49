"""The public import path of the dialogue embedder (`tfdialemb.inference.dialogue_embedder`):
`from tfdialemb.dialogue_embedder import DialogueEmbedder`."""
from tfdialemb.core import namespace_check  # noqa: F401  (a shadowed package stops here, before TensorFlow)
from tfdialemb.inference.dialogue_embedder import DialogueEmbedder

__all__ = ["DialogueEmbedder"]
