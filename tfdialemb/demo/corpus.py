"""A synthetic English corpus of labelled two-party task dialogues, generated from tables.

Written to a file by `python -m data_prep.make_demo_corpus`; read directly by the demo and the
benchmarks. The demo has to train every method and evaluate domain clustering, dialogue retrieval and
intent-based semantic retrieval (SR) without downloading a corpus, so this module writes one from
tables (the tasks in `DOMAINS`, their wording in `templates.json` beside this module): 8 domains
(hotel, restaurant, taxi, train, weather, shopping, tech_support, banking), each with one to three
tasks whose flow runs through greeting, the request, slot questions and answers, the agent's
proposal, the user's confirmation or rejection, follow-up questions and closing.

- Speakers are "user" and "agent"; every turn has the field "intent" (e.g. "book_hotel",
  "ask_date", "inform_date", "confirm") and every dialogue the labels {"domain": name}.
- Greeting, slot, confirmation and closing intents are shared across domains, so retrieval by
  intent does not reduce to retrieval by domain; shared intents also have domain wordings.
- Surface variety: at least 5 paraphrases per intent, slot values kept consistent within a
  dialogue (names, dates, times, places, numbers, products), optional politeness, and typos,
  lower-casing or texting shorthand in a minority of user turns.
- Some dialogues have two consecutive turns of one speaker (a greeting before the request, the
  agent's "let me check", a rejection followed by the corrected detail), as real corpora do and
  `merge_consecutive_turns` expects.
- 4 to 14 turns; ids "demo-000001", ...; domains come in shuffled blocks so counts are balanced.

The output depends only on (number of dialogues, seed), through one `random.Random(seed)`; a
shorter corpus is a prefix of a longer one with the same seed.
"""
import dataclasses
import functools
import json
import os
import random
import re
import string
from typing import Callable, Dict, Iterator, List, Optional, Set, Tuple

from tfdialemb.dialogue import Dialogue, Turn

MIN_TURNS, MAX_TURNS = 4, 14
USER, AGENT = "user", "agent"
POLITENESS_RATE = 0.2
NOISE_RATE = 0.15
HOLD_RATE = 0.3
# How a dialogue may open before the request (name, turns), and how often each does.
OPENINGS = (("agent_opens", 1), ("greeting_exchange", 2), ("user_greets", 1))
OPENING_WEIGHTS = (0.45, 0.4, 0.15)


@dataclasses.dataclass(frozen=True)
class Task:
    """One thing a user can want in a domain and the intents that get it done.

    The agent asks for some of the `slots` the request did not mention (intents ask_<slot> /
    inform_<slot>), always for the `required` ones, then makes its `proposal`. When `accept` is
    set the user accepts it, or first rejects it with `reject` and changes one of
    `corrections`, and the agent proposes again with fresh `offered` values; `done` is the
    agent's closing of the task. `questions` are (user question, agent answer) intents.
    """
    request: str
    slots: Tuple[str, ...]
    proposal: str
    offered: Tuple[str, ...] = ()
    required: Tuple[str, ...] = ()
    corrections: Tuple[str, ...] = ()
    accept: Optional[str] = "confirm"
    reject: str = "deny"
    done: Optional[str] = None
    questions: Tuple[Tuple[str, str], ...] = ()


@dataclasses.dataclass(frozen=True)
class Domain:
    """A domain label and the tasks its dialogues are about."""
    name: str
    tasks: Tuple[Task, ...]


DOMAINS = (
    Domain("hotel", (
        Task("book_hotel", ("date", "nights", "people", "area", "price_range", "name"),
             "offer_hotel", offered=("hotel", "price", "stars"),
             corrections=("date", "nights", "people", "area", "price_range"), done="booking_done",
             questions=(("ask_price", "inform_price"), ("ask_parking", "inform_parking"),
                        ("ask_address", "inform_address"))),
    )),
    Domain("restaurant", (
        Task("book_restaurant", ("cuisine", "area", "people", "date", "time", "name"),
             "offer_restaurant", offered=("restaurant",),
             corrections=("cuisine", "area", "people", "date", "time"), done="booking_done",
             questions=(("ask_address", "inform_address"), ("ask_phone", "inform_phone"),
                        ("ask_price", "inform_price"))),
    )),
    Domain("taxi", (
        Task("book_taxi", ("origin", "destination", "time", "people"),
             "offer_taxi", offered=("car", "price"),
             corrections=("origin", "destination", "time", "people"), done="booking_done",
             questions=(("ask_price", "inform_price"), ("ask_phone", "inform_phone"),
                        ("ask_duration", "inform_duration"))),
    )),
    Domain("train", (
        Task("book_train", ("origin", "destination", "date", "time", "people"),
             "offer_train", offered=("train_id", "price", "arrival"), required=("destination",),
             corrections=("date", "time", "people"), done="booking_done",
             questions=(("ask_price", "inform_price"), ("ask_duration", "inform_duration"))),
    )),
    Domain("weather", (
        Task("ask_weather", ("city", "date"), "inform_weather", accept=None,
             questions=(("ask_rain", "inform_rain"), ("ask_temperature", "inform_temperature"))),
    )),
    Domain("shopping", (
        Task("track_order", ("order_id", "name"), "inform_order_status", accept=None,
             required=("order_id",),
             questions=(("ask_delivery_date", "inform_delivery_date"),)),
        Task("return_item", ("order_id", "product", "reason"), "offer_refund",
             offered=("amount",), corrections=("product",), done="request_done",
             questions=(("ask_refund_time", "inform_refund_time"),)),
    )),
    Domain("tech_support", (
        Task("report_problem", ("device", "system", "error"), "suggest_fix", offered=("fix",),
             accept="problem_solved", reject="problem_persists", done="resolved",
             corrections=("error",),
             questions=(("ask_warranty", "inform_warranty"),)),
    )),
    Domain("banking", (
        Task("check_balance", ("account", "name"), "inform_balance", accept=None,
             questions=(("ask_transactions", "inform_transactions"),)),
        Task("transfer_money", ("amount", "recipient", "account", "date"), "confirm_transfer",
             required=("amount", "recipient"),
             corrections=("amount", "recipient", "date"), done="request_done",
             questions=(("ask_fee", "inform_fee"), ("ask_duration", "inform_duration"))),
        Task("block_card", ("card_digits", "name"), "confirm_card_block", required=("card_digits",),
             corrections=("card_digits",), done="request_done",
             questions=(("ask_new_card", "inform_new_card"),)),
    )),
)

TABLES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates.json")
"""The corpus' wording, beside this module, read once on import:
- "templates": paraphrases by intent, worded to fit every domain that uses the intent (a rendered
  utterance gets its first letter capitalised, so a template may start with a slot);
- "domain_templates": extra paraphrases of shared intents in one domain's own words, added to
  "templates" (a slot in a closing turn is one the agent's proposal always mentions);
- "slot_values": what `SAMPLERS` draws from (values may start a sentence, so none carries its own
  article unless every template expects one; "prices", "amounts" and "travel_minutes" are
  [low, high] per domain);
- "courtesy": optional words around a user turn; "shorthand": [pattern, replacement] texting
  abbreviations for noisy user turns."""


def _frozen(value):
    """`value` read from JSON with its lists as tuples, the tables' types in Python."""
    if isinstance(value, list):
        return tuple(_frozen(item) for item in value)
    if isinstance(value, dict):
        return {key: _frozen(item) for key, item in value.items()}
    return value


def _read_tables(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return _frozen(json.load(f))


_TABLES = _read_tables(TABLES_FILE)
TEMPLATES: Dict[str, Tuple[str, ...]] = _TABLES["templates"]
DOMAIN_TEMPLATES: Dict[str, Dict[str, Tuple[str, ...]]] = _TABLES["domain_templates"]
_SLOT_VALUES = _TABLES["slot_values"]
FIRST_NAMES = _SLOT_VALUES["first_names"]
LAST_NAMES = _SLOT_VALUES["last_names"]
RELATIVE_DATES = _SLOT_VALUES["relative_dates"]
MONTHS = _SLOT_VALUES["months"]
AREAS = _SLOT_VALUES["areas"]
PRICE_RANGES = _SLOT_VALUES["price_ranges"]
HOTELS = _SLOT_VALUES["hotels"]
RESTAURANTS = _SLOT_VALUES["restaurants"]
CUISINES = _SLOT_VALUES["cuisines"]
CITIES = _SLOT_VALUES["cities"]
PLACES = _SLOT_VALUES["places"]
STREETS = _SLOT_VALUES["streets"]
CAR_COLOURS = _SLOT_VALUES["car_colours"]
CAR_MAKES = _SLOT_VALUES["car_makes"]
PRICES = _SLOT_VALUES["prices"]
AMOUNTS = _SLOT_VALUES["amounts"]
TRAVEL_MINUTES = _SLOT_VALUES["travel_minutes"]
TRANSFER_TIMES = _SLOT_VALUES["transfer_times"]
CONDITIONS = _SLOT_VALUES["conditions"]
PRODUCTS = _SLOT_VALUES["products"]
ORDER_STATUSES = _SLOT_VALUES["order_statuses"]
RETURN_REASONS = _SLOT_VALUES["return_reasons"]
REFUND_TIMES = _SLOT_VALUES["refund_times"]
ISSUES = _SLOT_VALUES["issues"]
DEVICES = _SLOT_VALUES["devices"]
SYSTEMS = _SLOT_VALUES["systems"]
ERRORS = _SLOT_VALUES["errors"]
FIXES = _SLOT_VALUES["fixes"]
ACCOUNTS = _SLOT_VALUES["accounts"]
MERCHANTS = _SLOT_VALUES["merchants"]
NUMBER_WORDS = _SLOT_VALUES["number_words"]
ASKING_PREFIXES = _TABLES["courtesy"]["asking_prefixes"]
ANSWERING_PREFIXES = _TABLES["courtesy"]["answering_prefixes"]
ASKING_SUFFIXES = _TABLES["courtesy"]["asking_suffixes"]
ANSWERING_SUFFIXES = _TABLES["courtesy"]["answering_suffixes"]
SHORTHAND = _TABLES["shorthand"]
# The user turns that are courtesies themselves, so get none around them.
COURTESY_INTENTS = ("greet", "thank", "goodbye", "no_more")


def _clock(minutes: int, style: str) -> str:
    """A time of day in a dialogue's `style`: "24h" ("19:30") or "12h" ("7:30 pm", "8 am")."""
    hour, minute = divmod(minutes % (24 * 60), 60)
    half_day_hour = hour % 12 or 12
    suffix = "am" if hour < 12 else "pm"
    if style == "24h":
        return f"{hour:02d}:{minute:02d}"
    if minute == 0:
        return f"{half_day_hour} {suffix}"
    return f"{half_day_hour}:{minute:02d} {suffix}"


def _span(minutes: int) -> str:
    """A duration: "25 minutes", "1 hour 10 minutes", "2 hours"."""
    hours, minutes = divmod(minutes, 60)
    parts = []
    if hours:
        parts.append(f"{hours} hour{'s' if hours > 1 else ''}")
    if minutes:
        parts.append(f"{minutes} minutes")
    return " ".join(parts)


def _ordinal(day: int) -> str:
    if 10 <= day % 100 <= 20:
        return f"{day}th"
    return f"{day}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(day % 10, 'th')}"


def _date(rng: random.Random) -> str:
    """A date as people say it: "tomorrow", "next Monday", "June 14th", "the 3rd of May"."""
    if rng.random() < 0.55:
        return rng.choice(RELATIVE_DATES)
    ordinal = _ordinal(rng.randint(1, 28))
    month = rng.choice(MONTHS)
    return f"{month} {ordinal}" if rng.random() < 0.5 else f"the {ordinal} of {month}"


def _full_name(rng: random.Random) -> str:
    return f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"


def _count(rng: random.Random, low: int, high: int) -> str:
    """A small number, as a digit or a word."""
    number = rng.randint(low, high)
    return NUMBER_WORDS[number] if rng.random() < 0.5 else str(number)


def _money(rng: random.Random, low: float, high: float, cents: bool = False) -> str:
    amount = rng.uniform(low, high) if cents else rng.randint(int(low), int(high))
    return f"${amount:,.2f}" if cents else f"${amount:,}"


def _other_than(values: "DialogueValues", key: str, draw: Callable[[], str]) -> str:
    """A fresh draw that differs from `values[key]` (a destination unlike the origin, ...)."""
    taken = values[key]
    choice = draw()
    while choice == taken:
        choice = draw()
    return choice


def _train_id(rng: random.Random) -> str:
    return f"{rng.choice('TRGW')}{rng.randint(1000, 9999)}"


def _reference(rng: random.Random) -> str:
    return "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(8))


# How each slot value is drawn: (rng, the dialogue's values so far, domain name) -> text.
# departure_minutes and travel_minutes are the numbers behind time, arrival and duration;
# clock_style keeps the times of one dialogue in one spelling.
SAMPLERS: Dict[str, Callable[[random.Random, "DialogueValues", str], str]] = {
    "name": lambda rng, values, domain: _full_name(rng),
    "recipient": lambda rng, values, domain: _other_than(values, "name", lambda: _full_name(rng)),
    "date": lambda rng, values, domain: _date(rng),
    "delivery_date": lambda rng, values, domain: _date(rng),
    "departure_minutes": lambda rng, values, domain: str(rng.randrange(6 * 60, 22 * 60, 15)),
    "clock_style": lambda rng, values, domain: rng.choice(("24h", "12h", "12h")),
    "time": lambda rng, values, domain: _clock(int(values["departure_minutes"]),
                                               values["clock_style"]),
    "travel_minutes": lambda rng, values, domain: str(
        rng.randint(*TRAVEL_MINUTES.get(domain, (10, 60)))),
    "duration": lambda rng, values, domain: (
        _span(int(values["travel_minutes"])) if domain in TRAVEL_MINUTES
        else rng.choice(TRANSFER_TIMES)),
    "arrival": lambda rng, values, domain: _clock(
        int(values["departure_minutes"]) + int(values["travel_minutes"]), values["clock_style"]),
    "people": lambda rng, values, domain: _count(rng, 2, 8),
    "nights": lambda rng, values, domain: (
        rng.choice(("one night", "1 night")) if rng.random() < 0.2
        else f"{_count(rng, 2, 7)} nights"),
    "area": lambda rng, values, domain: rng.choice(AREAS),
    "price_range": lambda rng, values, domain: rng.choice(PRICE_RANGES),
    "hotel": lambda rng, values, domain: rng.choice(HOTELS),
    "stars": lambda rng, values, domain: str(rng.randint(2, 5)),
    "restaurant": lambda rng, values, domain: rng.choice(RESTAURANTS),
    "cuisine": lambda rng, values, domain: rng.choice(CUISINES),
    "city": lambda rng, values, domain: rng.choice(CITIES),
    "origin": lambda rng, values, domain: rng.choice(PLACES[domain]),
    "destination": lambda rng, values, domain: _other_than(
        values, "origin", lambda: rng.choice(PLACES[domain])),
    "car": lambda rng, values, domain: f"{rng.choice(CAR_COLOURS)} {rng.choice(CAR_MAKES)}",
    "phone": lambda rng, values, domain: (
        f"0{rng.randint(1000, 9999)} {rng.randint(100000, 999999)}"),
    "address": lambda rng, values, domain: f"{rng.randint(1, 120)} {rng.choice(STREETS)}",
    "price": lambda rng, values, domain: _money(rng, *PRICES.get(domain, (10, 100))),
    "parking_fee": lambda rng, values, domain: _money(rng, 5, 30),
    "reference": lambda rng, values, domain: _reference(rng),
    "train_id": lambda rng, values, domain: _train_id(rng),
    "condition": lambda rng, values, domain: rng.choice(CONDITIONS),
    "temperature": lambda rng, values, domain: (
        f"{rng.randint(-8, 2) if values['condition'] == 'snowy' else rng.randint(4, 34)} degrees"),
    "rain_chance": lambda rng, values, domain: f"{rng.randrange(0, 100, 10)}%",
    "order_id": lambda rng, values, domain: str(rng.randint(100000, 999999)),
    "product": lambda rng, values, domain: rng.choice(PRODUCTS),
    "order_status": lambda rng, values, domain: rng.choice(ORDER_STATUSES),
    "reason": lambda rng, values, domain: rng.choice(RETURN_REASONS),
    "refund_days": lambda rng, values, domain: rng.choice(REFUND_TIMES),
    "issue": lambda rng, values, domain: rng.choice(ISSUES),
    "device": lambda rng, values, domain: rng.choice(DEVICES),
    "system": lambda rng, values, domain: rng.choice(SYSTEMS),
    "error": lambda rng, values, domain: rng.choice(ERRORS),
    "fix": lambda rng, values, domain: rng.choice(FIXES),
    "warranty_end": lambda rng, values, domain: f"{rng.choice(MONTHS)} {rng.randint(2025, 2028)}",
    "account": lambda rng, values, domain: rng.choice(ACCOUNTS),
    "amount": lambda rng, values, domain: _money(rng, *AMOUNTS[domain], cents=rng.random() < 0.3),
    "balance": lambda rng, values, domain: _money(rng, 10, 25000, cents=True),
    "merchant": lambda rng, values, domain: rng.choice(MERCHANTS),
    "fee": lambda rng, values, domain: _money(rng, 1, 15, cents=True),
    "card_digits": lambda rng, values, domain: f"{rng.randrange(10000):04d}",
}
# Values drawn anew with a value: the number behind it and what is computed from it.
TIED_VALUES = {"time": ("departure_minutes", "arrival")}


class DialogueValues(dict):
    """The slot values of one dialogue, each drawn the first time a template needs it.

    Drawing lazily keeps a value consistent across turns and spends random numbers only on
    the slots a dialogue mentions.
    """

    def __init__(self, rng: random.Random, domain: str):
        super().__init__()
        self.rng, self.domain = rng, domain

    def __missing__(self, key: str) -> str:
        value = SAMPLERS[key](self.rng, self, self.domain)
        self[key] = value
        return value

    def redraw(self, key: str) -> None:
        """Forgets `key` and the values tied to it, so the next mention draws anew."""
        for name in (key,) + TIED_VALUES.get(key, ()):
            self.pop(name, None)

    def redraw_differently(self, key: str) -> None:
        """Redraws `key` until it differs from its current value (a user's correction)."""
        old = self.get(key)
        self.redraw(key)
        while self[key] == old:
            self.redraw(key)


@functools.lru_cache(maxsize=None)
def _fields(template: str) -> frozenset:
    """The slot names a template mentions."""
    return frozenset(field for _, field, _, _ in string.Formatter().parse(template) if field)


@functools.lru_cache(maxsize=None)
def templates_for(domain: str, intent: str) -> Tuple[str, ...]:
    """The paraphrases of `intent` as spoken in `domain`: shared ones plus the domain's own."""
    return TEMPLATES[intent] + DOMAIN_TEMPLATES.get(domain, {}).get(intent, ())


def _add_typo(rng: random.Random, text: str) -> str:
    """Swaps two neighbouring letters or drops one, inside a word of four letters or more."""
    words = text.split(" ")
    candidates = [i for i, word in enumerate(words) if len(word) >= 4 and word.isalpha()]
    if not candidates:
        return text.lower()
    index = rng.choice(candidates)
    word = words[index]
    at = rng.randrange(1, len(word) - 1)
    if rng.random() < 0.5:
        words[index] = word[:at] + word[at + 1] + word[at] + word[at + 2:]
    else:
        words[index] = word[:at] + word[at + 1:]
    return " ".join(words)


def _casual(text: str) -> str:
    """All lower case without the final full stop, as typed on a phone."""
    return text.lower().rstrip(".") or text.lower()


def _shorthand(rng: random.Random, text: str) -> str:
    """Texting shorthand ("u", "pls", "thx", ...) in lower case, or just lower case."""
    lowered = _casual(text)
    pattern, replacement = rng.choice(SHORTHAND)
    return re.sub(pattern, replacement, lowered)


def _user_variation(rng: random.Random, text: str, intent: str, asking: bool) -> str:
    """Politeness around task turns, then typos or casual typing in a minority of user turns.

    `asking` turns (requests and questions) get asking courtesies, the others answering ones.
    """
    if intent not in COURTESY_INTENTS and rng.random() < POLITENESS_RATE:
        if text.endswith("?") or rng.random() < 0.5:
            text = rng.choice(ASKING_PREFIXES if asking else ANSWERING_PREFIXES) + text
        else:
            text = text + rng.choice(ASKING_SUFFIXES if asking else ANSWERING_SUFFIXES)
    if rng.random() < NOISE_RATE:
        kind = rng.random()
        if kind < 0.4:
            text = _add_typo(rng, text)
        elif kind < 0.75:
            text = _casual(text)
        else:
            text = _shorthand(rng, text)
    return text


class _Conversation:
    """Turns of one dialogue being written, rendered with its slot values."""

    def __init__(self, rng: random.Random, domain: Domain, task: Task):
        self.rng, self.domain, self.task = rng, domain, task
        self.values = DialogueValues(rng, domain.name)
        self.turns: List[Turn] = []
        self.used_templates: Set[str] = set()

    def say(self, speaker: str, intent: str, template: Optional[str] = None) -> None:
        """Adds a turn; without a `template`, a paraphrase not yet used in this dialogue."""
        if template is None:
            paraphrases = templates_for(self.domain.name, intent)
            fresh = [t for t in paraphrases if t not in self.used_templates]
            template = self.rng.choice(fresh or paraphrases)
        self.used_templates.add(template)
        text = template.format_map(self.values)
        text = text[0].upper() + text[1:]
        if speaker == USER:
            asking = intent == self.task.request or intent.startswith("ask_")
            text = _user_variation(self.rng, text, intent, asking)
        self.turns.append(Turn(speaker, text, {"intent": intent}))


def _choose_extras(rng: random.Random, task: Task, askable: List[str],
                   budget: int) -> Dict[str, int]:
    """Parts of the dialogue beyond its core (name -> turns) that fit in `budget` turns.

    Exchanges about the task's required slots among `askable` always happen; the other
    `askable` slots are preferred to the remaining parts, so most dialogues ask for a few
    details before the proposal.
    """
    chosen = {f"slot:{slot}": 2 for slot in askable if slot in task.required}
    budget -= 2 * len(chosen)
    opening = rng.choices(OPENINGS, weights=OPENING_WEIGHTS)[0]
    candidates = [(rng.random() * 0.5, f"slot:{slot}", 2) for slot in askable
                  if slot not in task.required]
    candidates += [(rng.random(), f"question:{index}", 2) for index in range(len(task.questions))]
    candidates += [(rng.random(), name, size) for name, size in
                   (opening, ("ask_more", 2), ("farewell", 1))]
    if rng.random() < HOLD_RATE:
        candidates.append((rng.random(), "hold", 1))
    if task.accept:
        candidates.append((rng.random(), "rejection", 3 if task.corrections else 2))
    for _, name, size in sorted(candidates):
        if size <= budget:
            chosen[name] = size
            budget -= size
    return chosen


def _core_length(task: Task) -> int:
    """Turns every dialogue of `task` has: request, proposal, acceptance, done, thanks, closing."""
    return 4 + (task.accept is not None) + (task.done is not None)


def _dialogue(rng: random.Random, number: int, domain: Domain) -> Dialogue:
    task = rng.choice(domain.tasks)
    request = rng.choice(templates_for(domain.name, task.request))
    askable = [slot for slot in task.slots if slot not in _fields(request)]
    target = rng.randint(MIN_TURNS, MAX_TURNS)
    extras = _choose_extras(rng, task, askable, target - _core_length(task))
    talk = _Conversation(rng, domain, task)

    if "agent_opens" in extras:
        talk.say(AGENT, "offer_help")
    elif "user_greets" in extras:
        talk.say(USER, "greet")
    elif "greeting_exchange" in extras:
        talk.say(USER, "greet")
        talk.say(AGENT, "offer_help")
    talk.say(USER, task.request, request)
    for slot in askable:
        if f"slot:{slot}" in extras:
            talk.say(AGENT, f"ask_{slot}")
            talk.say(USER, f"inform_{slot}")
    if "hold" in extras:
        talk.say(AGENT, "hold")
    talk.say(AGENT, task.proposal)
    if task.accept:
        if "rejection" in extras:
            talk.say(USER, task.reject)
            if task.corrections:
                corrected = rng.choice(task.corrections)
                talk.values.redraw_differently(corrected)
                talk.say(USER, f"inform_{corrected}")
            for offered in task.offered:
                talk.values.redraw(offered)
            talk.say(AGENT, task.proposal)
        talk.say(USER, task.accept)
        if task.done:
            talk.say(AGENT, task.done)
    for index, (question, answer) in enumerate(task.questions):
        if f"question:{index}" in extras:
            talk.say(USER, question)
            talk.say(AGENT, answer)
    talk.say(USER, "thank")
    if "ask_more" in extras:
        talk.say(AGENT, "ask_more")
        talk.say(USER, "no_more")
        talk.say(AGENT, "goodbye")
    else:
        talk.say(AGENT, rng.choice(("welcome", "goodbye")))
    if "farewell" in extras:
        talk.say(USER, "goodbye")
    return Dialogue(f"demo-{number:06d}", tuple(talk.turns), {"domain": domain.name})


def generate(num_dialogues: int, seed: int = 0) -> Iterator[Dialogue]:
    """Streams `num_dialogues` labelled dialogues, the same ones for the same seed.

    Domains come in blocks of one dialogue per domain, shuffled, so every prefix of the corpus
    is balanced to within one dialogue per domain.
    """
    if num_dialogues < 0:
        raise ValueError(f"num_dialogues must be >= 0, got {num_dialogues}")
    rng = random.Random(seed)
    block: List[Domain] = []
    for number in range(1, num_dialogues + 1):
        if not block:
            block = list(DOMAINS)
            rng.shuffle(block)
        yield _dialogue(rng, number, block.pop())
