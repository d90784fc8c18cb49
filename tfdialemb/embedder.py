"""The public import path of the sentence embedder (`tfdialemb.inference.embedder`):
`from tfdialemb.embedder import SentenceEmbedder`."""
from tfdialemb.core import namespace_check  # noqa: F401  (a shadowed package stops here, before TensorFlow)
from tfdialemb.inference.embedder import SentenceEmbedder

__all__ = ["SentenceEmbedder"]
