"""The SavedModel of each inference kind: `SERVABLES[kind]` turns the kind's runtime
(`tfdialemb.inference.kinds.RUNTIMES`), its settings and warm-up inputs into what `export` writes.

The kinds themselves are `tfdialemb.inference_kinds.KINDS`; a test keeps the three tables' keys equal.
"""
import dataclasses
from typing import Any, Callable, Mapping, Sequence

from tfdialemb.serving import context_response, curved, dialogue, layout, selection, sentence


@dataclasses.dataclass(frozen=True)
class ServedKind:
    """How one kind is exported."""
    warmup: str
    """What its warm-up requests are made of: "sentences" or "dialogues"."""
    build: Callable[[Any, Mapping[str, Any], Sequence], layout.Servable]
    """(runtime, settings, warm-up inputs) → the Servable."""
    one_request_per_input: bool = False
    """Its warm-up sends each input alone, then all together (reported as "N inputs"); the others
    derive their requests from the inputs (reported as "R requests from N inputs")."""

    def describe_warmup(self, servable: layout.Servable, inputs: Sequence) -> str:
        if self.one_request_per_input:
            return f"{len(inputs)} {self.warmup}"
        return f"{len(servable.records)} requests from {len(inputs)} {self.warmup}"


SERVABLES = {
    "sentence": ServedKind("sentences", lambda runtime, settings, inputs: sentence.sentence_servable(runtime, inputs),
                           one_request_per_input=True),
    "dialogue": ServedKind("dialogues", lambda runtime, settings, inputs: dialogue.dialogue_servable(runtime, inputs),
                           one_request_per_input=True),
    "curved": ServedKind("dialogues", lambda runtime, settings, inputs: curved.curved_servable(
        runtime, inputs, settings["curved"], settings["speaker_tokens"])),
    "selection": ServedKind("dialogues",
                            lambda runtime, settings, inputs: selection.selection_servable(runtime, inputs)),
    "context_response": ServedKind("dialogues", lambda runtime, settings, inputs:
                                   context_response.context_response_servable(runtime, inputs)),
}
"""Kind → how `python -m tfdialemb.export --kind=KIND` builds its SavedModel."""
