"""The public import path of the sentence embedder (`tfdialemb.inference.embedder`):
`from tfdialemb.embedder import SentenceEmbedder`."""
from tfdialemb.inference.embedder import SentenceEmbedder

__all__ = ["SentenceEmbedder"]
