"""MDC domain TSVs → dialogues: both header layouts, quoting, act columns, domain, bad lines."""

import dataclasses
import os
import shutil

import pytest

from tfdialemb.converters.mdc import FORMATS
from tfdialemb.dialogue import Dialogue, DialogueFormatError, ErrorPolicy, Turn

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "mdc")
TAXI = os.path.join(FIXTURES, "taxi_all.tsv")
MOVIE = os.path.join(FIXTURES, "movie_all.tsv")
TAXI_WITH_ERRORS = os.path.join(FIXTURES, "taxi_with_errors.tsv")
convert = FORMATS["mdc"]


def _turn(speaker, text, *acts, intent, joined=None):
    """`intent`: the paper's one act per message; `joined`: every act name (default: the same)."""
    return Turn(speaker, text, {"dialogue_acts": list(acts), "intent": intent, "intent_acts": joined or intent})


TAXI_EXPECTED = [
    Dialogue(
        "taxi-1",
        (
            _turn(
                "user",
                "I need a ride to the airport tomorrow morning",
                "request(taxi;dropoff_location=the airport;date=tomorrow;pickup_time=morning)",
                intent="request",
            ),
            _turn("agent", "What city are you in?", "request(city)", intent="request"),
            _turn("user", "Portland, OR", "inform(city=Portland;state=OR)", intent="inform"),
            _turn(
                "agent", "Got it, how many passengers?", "request(numberofpeople)", intent="request"
            ),
            _turn("user", "two of us", "inform(numberofpeople=2)", intent="inform"),
            _turn(
                "agent",
                "$31-40 is the price for an uberX. Would you like this option?",
                "inform(cost=$31-40;car_type=uberX)",
                "confirm_question()",
                intent="inform", joined="confirm_question+inform",
            ),
            _turn("user", "Yes, book it", "confirm_answer()", intent="confirm_answer"),
        ),
        {"domain": "taxi"},
    ),
    Dialogue(
        "taxi-2",
        (
            _turn("user", "Hello!", "greeting(greeting=Hello)", intent="greeting"),
            _turn(
                "agent",
                "Hi, where should the driver pick you up?",
                "greeting(greeting=Hi)",
                "request(pickup_location)",
                intent="request", joined="greeting+request",
            ),
            _turn(
                "user",
                'The sign says "Main Entrance", by the fountain',
                "inform(pickup_location=Main Entrance)",
                intent="inform",
            ),
            _turn(
                "agent",
                "Thanks, I'll send a car there.",
                "thanks()",
                "inform(taskcomplete)",
                intent="inform", joined="inform+thanks",
            ),
            Turn("user", "ok"),
        ),
        {"domain": "taxi"},
    ),
]

MOVIE_EXPECTED = [
    Dialogue(
        "movie-1",
        (
            _turn(
                "user",
                "Are there any comedies playing in Austin tonight?",
                "request(moviename;genre=comedy;city=Austin;date=tonight)",
                intent="request",
            ),
            _turn(
                "agent",
                "Yes, Paddington Bay is playing at 7:10pm and 9:30pm. "
                "Which showing would you like?",
                "inform(moviename=Paddington Bay;starttime={7:10pm#9:30pm})",
                "multiple_choice(starttime)",
                intent="inform", joined="inform+multiple_choice",
            ),
            _turn(
                "user",
                "The 9:30 one, three tickets please",
                "inform(starttime=9:30pm;numberofpeople=3)",
                intent="inform",
            ),
            _turn(
                "agent",
                "Your 3 tickets for Paddington Bay at 9:30pm are booked. Enjoy!",
                "inform(taskcomplete;numberofpeople=3;moviename=Paddington Bay;starttime=9:30pm)",
                "closing(closing=Enjoy)",
                intent="inform", joined="closing+inform",
            ),
        ),
        {"domain": "movie"},
    ),
    Dialogue(
        "movie-2",
        (
            _turn(
                "user",
                "Can you find me a table at a sushi place?",
                "request(other;other=a table at a sushi place)",
                intent="request",
            ),
            _turn("agent", "Sorry, I can only help with movie tickets.", "Deny()", intent="deny"),
            _turn("user", "Never mind, thanks", "thanks()", intent="thanks"),
        ),
        {"domain": "movie"},
    ),
]


def test_converts_taxi_layout_with_quoted_texts_and_act_columns():
    errors = ErrorPolicy("fail")
    assert list(convert(TAXI, errors)) == TAXI_EXPECTED
    assert errors.skipped == 0


def test_converts_movie_layout_with_padded_columns():
    errors = ErrorPolicy("fail")
    assert list(convert(MOVIE, errors)) == MOVIE_EXPECTED
    assert errors.skipped == 0


def test_file_name_without_domain_gives_stem_prefix_and_no_labels(tmp_path):
    renamed = str(tmp_path / "sample.tsv")
    shutil.copy(TAXI, renamed)
    expected = [
        dataclasses.replace(dialogue, id=dialogue.id.replace("taxi", "sample"), labels={})
        for dialogue in TAXI_EXPECTED
    ]
    assert [d.id for d in expected] == ["sample-1", "sample-2"]
    assert list(convert(renamed, ErrorPolicy("fail"))) == expected


def test_first_bad_line_fails_naming_file_and_line():
    with pytest.raises(DialogueFormatError) as raised:
        list(convert(TAXI_WITH_ERRORS, ErrorPolicy("fail")))
    assert raised.value.path == TAXI_WITH_ERRORS
    assert raised.value.location == 3
    assert raised.value.reason == "Message.From must be user or agent, got 'driver'"


def test_skip_mode_keeps_every_good_session_and_counts_bad_lines():
    errors = ErrorPolicy("skip")
    assert list(convert(TAXI_WITH_ERRORS, errors)) == [
        Dialogue(
            "taxi-1",
            (
                _turn("user", "I need a cab", "request(taxi)", intent="request"),
                _turn(
                    "agent", "Where are you headed?", "request(dropoff_location)", intent="request"
                ),
            ),
            {"domain": "taxi"},
        ),
        Dialogue(
            "taxi-2", (_turn("user", "Thanks", "thanks()", intent="thanks"),), {"domain": "taxi"}
        ),
    ]
    assert errors.skipped == 4
    assert [message.split(": ", 1)[0] for message in errors.messages] == [
        f"{TAXI_WITH_ERRORS}:{line}" for line in (3, 4, 5, 6)
    ]
    assert "got 4" in errors.messages[1]
    assert errors.messages[2].endswith("empty Message.Text")
    assert errors.messages[3].endswith("dialogue act without a name")


def test_missing_file_raises_with_path(tmp_path):
    missing = str(tmp_path / "taxi_all.tsv")
    with pytest.raises(FileNotFoundError, match="taxi_all.tsv"):
        list(convert(missing, ErrorPolicy("fail")))


def test_intents_are_the_eleven_mdc_acts_one_per_message():
    """DialogueCSE Sec. 5.1: MDC has 11 identical intents per domain; a message's intent is its
    first act that carries the task, a social act only when it has no other."""
    from tfdialemb.converters.mdc import MDC_ACTS

    assert len(MDC_ACTS) == 11
    turns = [t for d in list(convert(TAXI, ErrorPolicy("fail"))) + list(convert(MOVIE, ErrorPolicy("fail")))
             for t in d.turns if t.fields]
    assert {t.fields["intent"] for t in turns} <= set(MDC_ACTS)
    assert any("+" in t.fields["intent_acts"] for t in turns)
