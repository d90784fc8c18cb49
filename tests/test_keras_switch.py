"""`import tfdialemb` makes tf.keras resolve to tf-keras whatever the caller imported first, and
turns TensorFlow's oneDNN CPU kernels on unless the user chose."""
import os
import platform
import subprocess
import sys

import pytest

PROGRAMS = {
    "tfdialemb first": "import tfdialemb\nimport tensorflow as tf",
    "tfdialemb first, keras before tensorflow": "import tfdialemb\nimport keras\nimport tensorflow as tf",
    "tensorflow first, keras untouched": "import tensorflow as tf\nimport tfdialemb",
    "Keras 3 already bound": "import tensorflow as tf\ntf.keras.layers.Dense\nimport tfdialemb",
    "keras imported first": "import keras\nimport tensorflow as tf\nimport tfdialemb",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_tf_keras_is_tf_keras(name):
    program = PROGRAMS[name] + (
        "\nimport tf_keras\n"
        "assert tf.keras.__name__.startswith('tf_keras'), tf.keras.__name__\n"
        "assert isinstance(tf.keras.layers.Dense(2), tf_keras.layers.Layer)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TF_USE_LEGACY_KERAS"}
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="TensorFlow's oneDNN kernels: x86")
@pytest.mark.parametrize("given, enabled", [(None, "True"), ("0", "False"), ("1", "True")])
def test_onednn_kernels_are_on_unless_the_user_set_them(given, enabled):
    env = {k: v for k, v in os.environ.items() if k != "TF_ENABLE_ONEDNN_OPTS"}
    if given is not None:
        env["TF_ENABLE_ONEDNN_OPTS"] = given
    program = ("import tfdialemb\nfrom tensorflow.python.util import _pywrap_util_port\n"
               "print(_pywrap_util_port.IsMklEnabled())")
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0 and result.stdout.split()[-1] == enabled, result.stderr[-2000:]
