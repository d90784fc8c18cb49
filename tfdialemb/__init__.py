"""tfdialemb: sentence and dialogue embeddings learned from dialogues (TF Model Garden BERT).

Importing the package is cheap: TensorFlow loads with the first module that builds or reads a
model, so the commands that need none (`data convert`, `validate`, `split`, `stats`) start in
about half a second. Model Garden and the
`transformers` TensorFlow classes are built on Keras 2, so the import sets TF_USE_LEGACY_KERAS,
which makes `tf.keras` tf-keras when TensorFlow loads; a TensorFlow loaded earlier has its
`tf.keras` routed to tf-keras here. It also quiets TensorFlow's C++ logging to errors unless
TF_CPP_MIN_LOG_LEVEL is set, and for the command-line tools filters the start-up notices that
level cannot reach (`tfdialemb.core.quiet`). Unless TF_ENABLE_ONEDNN_OPTS is set, it turns on
TensorFlow's oneDNN CPU kernels, which TensorFlow on Linux turns on only for CPUs with
neural-network instructions (AVX512_VNNI, AVX512_BF16, AVX_VNNI or AMX): on the others, such as
AVX2 CPUs, they make encoding, scoring and training faster (docs/benchmark.md).
"""
import logging as _logging
import os as _os
import sys as _sys

if _sys.argv[:1] == ["-m"] or _os.path.basename((_sys.argv or [""])[0]).startswith("tfdialemb-"):
    # `python -m tfdialemb.<command>` is starting (sys.argv[0] is "-m" while Python finds the
    # module), or a console script `tfdialemb-<command>`: Ctrl-C while TensorFlow loads ends it
    # in one line, as within the command.
    from tfdialemb.core.cli import end_quietly_on_interrupt as _end_quietly_on_interrupt

    _end_quietly_on_interrupt()

_os.environ["TF_USE_LEGACY_KERAS"] = "1"
_os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")  # read when TensorFlow loads
# TensorFlow's C++ start-up notices (CUDA probing, oneDNN) fill a screen on every command; show
# only errors unless the user asks for more (-v), as the run_*.sh scripts do.
from tfdialemb.core import quiet as _quiet  # noqa: E402

_quiet.configure()

if "tensorflow" in _sys.modules:
    # TensorFlow came first; its tf.keras, read now, follows the variable above unless something
    # had already resolved it to Keras 3.
    import tensorflow as _tf

    if not _tf.keras.__name__.startswith("tf_keras"):
        import tf_keras as _tf_keras

        _logging.getLogger(__name__).warning(
            "tf.keras was already bound to Keras 3 when tfdialemb was imported; rebinding it to "
            "tf-keras. Keras 3 objects created before this point cannot be mixed with tfdialemb models."
        )
        _tf.keras = _tf_keras

__version__ = "0.1.0"
