"""`python -m tfdialemb.augment` with a test set, test-stages (crop and shuffle only), whose
context-response model is the topic source: the CLI tests run it as a subprocess.

With AUGMENT_STALL_DIR and AUGMENT_STALL_AFTER set, embedding stalls once that directory holds
that many chunk files, so a test can kill the run at a known point of its progress. With
AUGMENT_KILLED_AT set to a path, the process SIGKILLs itself when it renames a file onto that path.
"""
import os
import signal
import time

from tfdialemb.augment import presets
from topic_source import TEST_SET, TopicSource

presets.PRESETS[TEST_SET.name] = TEST_SET


class StallingTopicSource(TopicSource):
    def embed_contexts(self, contexts):
        directory = os.environ.get("AUGMENT_STALL_DIR")
        if directory and os.path.isdir(directory):
            finished = sum(name.startswith("chunk-") for name in os.listdir(directory))
            if finished >= int(os.environ["AUGMENT_STALL_AFTER"]):
                time.sleep(600)
        return super().embed_contexts(contexts)


if os.environ.get("AUGMENT_KILLED_AT"):
    _replace = os.replace

    def _replace_or_die(source, target):
        if os.path.abspath(target) == os.environ["AUGMENT_KILLED_AT"]:
            os.kill(os.getpid(), signal.SIGKILL)
        _replace(source, target)

    os.replace = _replace_or_die

from tfdialemb.augment.__main__ import run  # noqa: E402  (the test set must exist first)

run(lambda path, kind: StallingTopicSource())
