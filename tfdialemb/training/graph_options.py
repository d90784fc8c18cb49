"""Grappler for the training commands: off on machines without GPUs.

On a CPU, Grappler's meta-optimizer spent 1.0-2.2 s of a BERT training step's first call and no
later step ran faster with it (all-MiniLM-L6-v2, 64 pairs of up to 128 tokens, bfloat16, one
thread, three runs each: first call 5.9-6.9 s with it, 4.7-4.9 s without; median later step 1.50 s
either way). The rewrites it exists for are mostly GPU ones (layouts, fusions into cuDNN and cuBLAS
calls), unmeasured here, so machines with GPUs keep it. The setting is process-wide and a function
is optimised at its first call, so the commands set it before anything is traced.
"""


def apply_training_graph_options() -> bool:
    """Turns Grappler's meta-optimizer off on a machine without GPUs; returns whether it did
    (TensorFlow imported here: the commands define their flags without it)."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    if tf.config.list_physical_devices("GPU"):
        return False
    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
    return True
