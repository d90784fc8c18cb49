"""Schema-Guided Dialogue (SGD, DSTC8) to canonical dialogues.

Native layout: split directories train/, dev/, test/, each holding `dialogues_NNN.json` files and
a `schema.json` (the service schemas, not dialogues; ignored). Each dialogue file is a JSON list:

    [{"dialogue_id": "1_00000", "services": ["Restaurants_2"],
      "turns": [{"speaker": "USER", "utterance": str,
                 "frames": [{"service": "Restaurants_2", "actions": [...], "slots": [...],
                             "state": {"active_intent": "ReserveRestaurant",
                                       "requested_slots": [...], "slot_values": {...}}}]},
                {"speaker": "SYSTEM", "utterance": str,
                 "frames": [{"service": "Restaurants_2", "actions": [...], "slots": [...],
                             "service_call": {...}, "service_results": [...]}]}, ...]}, ...]

Turns alternate USER, SYSTEM from the first; only user frames hold a `state`, whose
`active_intent` is "NONE" when no intent of that service is active; a turn where the user moves to
another service has one frame per service. Confirmed in
google-research-datasets/dstc8-schema-guided-dialogue README.md ("Dialogue Representation", "The
Dialogue State") and dev/dialogues_001.json. MultiWOZ 2.2 adopted this representation, so the
conversion is multiwoz.convert_schema_guided, documented there: input one `dialogues_NNN.json`
file or one split directory; ids = `dialogue_id` (unique within a split only, "1_00000" exists in
train and dev, so convert one split at a time; a repeated id is reported); speakers "user"/"system";
labels {"domains": sorted services (e.g. "Restaurants_1"), "domain" when there is one}; user-turn
"intent" when the frames name exactly one active intent.
"""
from tfdialemb.converters.multiwoz import convert_schema_guided

FORMATS = {"sgd": convert_schema_guided}
