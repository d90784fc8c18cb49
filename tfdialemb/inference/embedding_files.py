"""Embeddings written in the layouts `python -m tfdialemb.encode` offers, chosen by extension."""
import json
import os

from tfdialemb.core.files import atomic_open, save_npy_atomic

OUTPUT_LAYOUTS = (".npy", ".jsonl", ".tsv")


def write_embeddings(path: str, texts, embeddings) -> None:
    """`embeddings` [len(texts), H] to `path` in the layout its extension names (OUTPUT_LAYOUTS),
    atomically."""
    extension = os.path.splitext(path)[1]
    if extension == ".npy":
        save_npy_atomic(path, embeddings)
        return
    with atomic_open(path) as f:
        for text, vector in zip(texts, embeddings):
            values = [f"{value:.9g}" for value in vector.tolist()]
            if extension == ".tsv":
                f.write("\t".join(values) + "\n")
            else:
                f.write(json.dumps({"text": text, "embedding": [float(v) for v in values]}, ensure_ascii=False) + "\n")
