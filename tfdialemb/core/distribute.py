"""Chooses the tf.distribute strategy from a flag: one device, several GPUs, or several machines.

TensorFlow is imported where a strategy is made, so the flags are defined without it (a command's
--help)."""
import json
import os
from typing import Optional, Sequence

from absl import flags

STRATEGIES = ("auto", "default", "mirrored", "multi_worker")
COLLECTIVE_TIMEOUT_S = 900
"""How long a multi-worker collective waits for the other workers by default; the first step's
tracing on a slow worker must fit in it."""


def define_flags() -> None:
    """Adds --strategy and --devices to a CLI's absl flags."""
    flags.DEFINE_enum(
        "strategy", "auto", STRATEGIES,
        "auto: mirrored when several GPUs are visible, else one device; mirrored: all local GPUs "
        "(or --devices); multi_worker: several machines described by the TF_CONFIG variable.",
    )
    flags.DEFINE_list("devices", None, "Devices for --strategy=mirrored, e.g. /gpu:0,/gpu:1.")
    flags.DEFINE_integer("collective_timeout", COLLECTIVE_TIMEOUT_S,
                         "multi_worker: seconds a cross-worker collective may wait for the other "
                         "workers before the run fails (a worker that died or never started).",
                         lower_bound=1)


def make_strategy(name: str = "auto", devices: Optional[Sequence[str]] = None,
                  collective_timeout: int = COLLECTIVE_TIMEOUT_S):
    """The tf.distribute.Strategy called `name` (see STRATEGIES); `devices` must exist on this
    machine (a MirroredStrategy over devices that do not would wait forever in its first all-reduce)."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    if name not in STRATEGIES:
        raise ValueError(f"unknown strategy {name!r}; expected one of {STRATEGIES}")
    # Physical, not logical, devices: listing logical ones starts the runtime, after which
    # MultiWorkerMirroredStrategy can no longer configure its collective ops.
    gpus = tf.config.list_physical_devices("GPU")
    if name == "auto":
        name = "mirrored" if len(gpus) > 1 or (devices and len(devices) > 1) else "default"
    if name == "default":
        return tf.distribute.get_strategy()
    if name == "mirrored":
        if devices:
            check_devices(devices)
        return tf.distribute.MirroredStrategy(devices=list(devices) if devices else None)
    if devices:
        raise ValueError("--devices applies to --strategy=mirrored; multi_worker uses every local GPU")
    _check_tf_config()
    implementation = (
        tf.distribute.experimental.CommunicationImplementation.NCCL
        if gpus
        else tf.distribute.experimental.CommunicationImplementation.RING
    )
    return tf.distribute.MultiWorkerMirroredStrategy(
        communication_options=tf.distribute.experimental.CommunicationOptions(
            implementation=implementation, timeout_seconds=collective_timeout
        )
    )


def check_devices(devices: Sequence[str]) -> None:
    """ValueError naming every device of `devices` this machine lacks, and the ones it has."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    available = tf.config.list_logical_devices()
    have = {(d.device_type.upper(), tf.DeviceSpec.from_string(d.name).device_index) for d in available}
    missing = []
    for device in devices:
        try:
            spec = tf.DeviceSpec.from_string(device)
        except ValueError:
            missing.append(device)
            continue
        if spec.device_type is None or (spec.device_type.upper(), spec.device_index or 0) not in have:
            missing.append(device)
    if missing:
        names = ", ".join(f"/{kind.lower()}:{index}" for kind, index in sorted(have))
        raise ValueError(f"--devices: {', '.join(missing)} not on this machine, which has {names}")


def is_chief(strategy) -> bool:
    """Whether this process writes shared outputs (worker 0, or the only process)."""
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None or not resolver.cluster_spec().as_dict():
        return True
    return resolver.task_type in (None, "chief") or (
        resolver.task_type == "worker" and resolver.task_id == 0
        and "chief" not in resolver.cluster_spec().as_dict()
    )


def _check_tf_config() -> None:
    raw = os.environ.get("TF_CONFIG")
    if not raw:
        raise ValueError(
            "--strategy=multi_worker needs the TF_CONFIG environment variable, e.g. "
            '{"cluster": {"worker": ["host1:12345", "host2:12345"]}, "task": {"type": "worker", '
            '"index": 0}} on the first machine and index 1 on the second'
        )
    try:
        config = json.loads(raw)
    except json.JSONDecodeError as e:
        raise ValueError(f"TF_CONFIG is not valid JSON: {e}") from None
    if "cluster" not in config or "task" not in config:
        raise ValueError("TF_CONFIG needs both 'cluster' and 'task' entries")
