"""`import tfdialemb` makes tf.keras resolve to tf-keras whatever the caller imported first."""
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
    env = {k: v for k, v in __import__("os").environ.items() if k != "TF_USE_LEGACY_KERAS"}
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
