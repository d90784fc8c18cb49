"""tfdialemb: sentence and dialogue embeddings learned from dialogues (TF Model Garden BERT).

Model Garden and the `transformers` TensorFlow classes are built on Keras 2, so importing this
package routes `tf.keras` to tf-keras, whatever the caller imported first. It also quiets
TensorFlow's C++ logging to errors unless TF_CPP_MIN_LOG_LEVEL is set, and for the command-line
tools filters the start-up notices that level cannot reach (`tfdialemb.quiet`).
"""
import logging as _logging
import os as _os

_os.environ["TF_USE_LEGACY_KERAS"] = "1"
# TensorFlow's C++ start-up notices (CUDA probing, oneDNN) fill a screen on every command; show
# only errors unless the user asks for more (-v), as the run_*.sh scripts do.
from tfdialemb import quiet as _quiet  # noqa: E402

_quiet.configure()

import tensorflow as _tf  # noqa: E402  (the variable above must be set first)
import tf_keras as _tf_keras  # noqa: E402

if not _tf.keras.__name__.startswith("tf_keras"):
    # tf.keras was resolved to Keras 3 before this import; point it at tf-keras from now on.
    _logging.getLogger(__name__).warning(
        "tf.keras was already bound to Keras 3 when tfdialemb was imported; rebinding it to "
        "tf-keras. Keras 3 objects created before this point cannot be mixed with tfdialemb models."
    )
    _tf.keras = _tf_keras

__version__ = "0.1.0"
