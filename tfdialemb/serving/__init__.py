"""TF Serving SavedModels: the versioned layout (`layout`) and one module per kind of model —
sentence embeddings (`sentence`), dial2vec dialogue embeddings (`dialogue`) and triple-encoder /
CCL incremental scoring (`curved`). `python -m tfdialemb.export --kind=...` drives them."""
