"""A model directory opened for inference releases its model when its block ends: evaluating
several models one after another holds one at a time."""
import weakref

from tfdialemb.model_dir import ModelSource


def test_the_loaded_encoder_is_freed_when_the_block_ends(hf_safetensors_dir):
    with ModelSource(hf_safetensors_dir) as source:
        encoder = weakref.ref(source.pretrained.encoder)
        assert encoder() is not None
    assert encoder() is None
    assert source.pretrained.encoder is not None  # loaded again on next use
