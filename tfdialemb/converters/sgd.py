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

`sgd_single_domain` keeps the dialogues the thesis evaluates on (Table 2: SGD "used only for
validation, dialogues with more than one domain removed"), labelled as the released code labels
them (voorhs/dialogue-augmentation mylib/datamakers/domain.py `sgd_labels` with `one_domain`): a
service's domain is its name without the "_N" suffix ("Restaurants_1" → "Restaurants"), the
domains are the released list THESIS_SGD_DOMAINS (SGD's without Travel and Weather, which the
released list comments out, and without the test-only Alarm, Messaging, Payment and Trains), and
a dialogue is kept when exactly one of them is among its services' domains. Its labels are
{"services": its sorted services, "domain": that domain}. So, as released, a dialogue whose other
services lie outside the list (e.g. Hotels_2 with Travel_1) counts as single-domain. The
dialogues left out are counted by reason, naming the domains of those with none of the list, and
`data convert` prints the counts.
"""
import collections
import dataclasses
from typing import Iterable, Iterator, Optional

from tfdialemb.converters.multiwoz import convert_schema_guided
from tfdialemb.dialogue import Dialogue, ErrorPolicy

THESIS_SGD_DOMAINS = ("Banks", "Buses", "Calendar", "Events", "Flights", "Homes", "Hotels", "Media",
                      "Movies", "Music", "RentalCars", "Restaurants", "RideSharing", "Services")


def thesis_domain(services: Iterable[str]) -> Optional[str]:
    """The one THESIS_SGD_DOMAINS domain among the services' domains, or None (none or several)."""
    domains = _domains(services) & set(THESIS_SGD_DOMAINS)
    return domains.pop() if len(domains) == 1 else None


def _domains(services: Iterable[str]) -> set:
    """The domains of SGD services: each name without its "_N" suffix."""
    return {service.rsplit("_", 1)[0] for service in services}


def not_single_domain(services: Iterable[str]) -> str:
    """Why `sgd_single_domain` leaves out a dialogue of these services, as counted in `dropped`:
    several of the thesis' domains, or none, naming the domains it has instead (Travel, Weather and
    the test-only ones), so a count of whole domains left out says which."""
    domains = _domains(services)
    among = domains & set(THESIS_SGD_DOMAINS)
    if among:
        return f"several of the thesis' {len(THESIS_SGD_DOMAINS)} domains"
    return f"none of the thesis' {len(THESIS_SGD_DOMAINS)} domains (only {', '.join(sorted(domains))})"


def convert_sgd_single_domain(input_path: str, errors: ErrorPolicy,
                              dropped: Optional[collections.Counter] = None) -> Iterator[Dialogue]:
    """Streams the single-domain SGD dialogues of a file or split folder, labelled by domain; the
    others are counted in `dropped`, by `not_single_domain`."""
    dropped = collections.Counter() if dropped is None else dropped
    for dialogue in convert_schema_guided(input_path, errors):
        services = dialogue.labels["domains"]
        domain = thesis_domain(services)
        if domain is None:
            dropped[not_single_domain(services)] += 1
        else:
            yield dataclasses.replace(dialogue, labels={"services": services, "domain": domain})


FORMATS = {"sgd": convert_schema_guided, "sgd_single_domain": convert_sgd_single_domain}
DESCRIPTIONS = {"sgd": "Schema-Guided Dialogue dialogues_*.json, a file or a split folder",
                "sgd_single_domain": "SGD dialogues with exactly one of the thesis' 14 domains, labelled by it"}
"""One line on each format, for `data convert --format=help`."""
