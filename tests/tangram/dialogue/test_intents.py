"""The meaning classifier: learnt from intents.yaml, sure of what it knows, unsure of the rest."""

from __future__ import annotations

import pytest

from agent.games.tangram.dialogue.intents import COMMAND, IntentModel, load_intents

MODEL = load_intents()


@pytest.mark.parametrize(("line", "intent"), [
    ("lets start with the biggest ones", "strategy"),
    ("nice that fits really well", "praise"),
    ("pls dont move the stuff i put", "keep_mine"),
    ("leave the green one alone", "keep_piece"),
    ("could you add a piece near the bottom", "vague_request"),
    ("make it a bit taller", "spatial"),
    ("move blue left", COMMAND),
])
def test_lines_worded_unlike_any_example_are_read_by_meaning(line: str, intent: str) -> None:
    reading = MODEL.read(line)
    assert reading.intent == intent and reading.sure, reading


def test_a_line_with_nothing_in_common_is_not_read() -> None:
    assert not MODEL.read("zzqx").sure
    assert MODEL.read("").intent == COMMAND and not MODEL.read("").sure


def test_the_model_learns_from_the_examples_it_is_given() -> None:
    model = IntentModel({"a": ["red apple", "green apple"], "b": ["blue sky", "grey sky"]})
    assert model.read("apple pie").intent == "a" and model.read("sky high").intent == "b"
