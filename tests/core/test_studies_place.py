"""Where a participant is in the flow, in words (core/studies/place.py), and their latest free text."""

from __future__ import annotations

import dataclasses

from agent.core.studies.place import MAX_TEXT_CHARS, last_texts, place_of
from agent.core.studies.questionnaires import Step
from agent.core.studies.store import ParticipantRow

ROW = ParticipantRow("P01", 1, 1, ("a", "b"), "active", None, "t", "t")
PAGE = Step(3, "page", 1, "partner", "after_each", "a", 1)
GAME = Step(4, "game", 2, None, None, "b", 2)


def test_the_place_names_the_page_the_game_or_how_the_participation_ended() -> None:
    assert place_of(ROW, PAGE, 1, 2, False) == "questionnaire partner (after game 1)"
    assert place_of(ROW, GAME, 1, 2, False) == "game 2 of 2 (b)"
    assert place_of(ROW, PAGE, 0, 2, True) == "consent"
    assert place_of(ROW, None, 1, 2, False) == "game 2 of 2"  # no questionnaires
    assert place_of(dataclasses.replace(ROW, state="completed"), None, 2, 2, False) == "done"
    assert place_of(dataclasses.replace(ROW, state="paused"), PAGE, 1, 2, False) == \
        "paused at questionnaire partner (after game 1)"
    ended = {"withdrawn": "withdrawn", "screened_out": "screened out (failed attention checks)",
             "timed_out": "timed out"}
    for outcome, words in ended.items():
        assert place_of(dataclasses.replace(ROW, state="dropped", outcome=outcome), PAGE, 1, 2, False) == words
    assert place_of(dataclasses.replace(ROW, outcome="timed_out"), PAGE, 1, 2, False).startswith("timed out (kept")
    assert place_of(dataclasses.replace(ROW, state="dropped", consent="refused"), None, 0, 2, True) == \
        "refused consent"
    assert place_of(dataclasses.replace(ROW, state="dropped"), GAME, 1, 2, False) == "dropped out"


def test_the_latest_free_text_is_a_text_items_value_or_an_other_text_cut_to_size() -> None:
    texts = {("final", "why")}
    answers: list[dict[str, object]] = [
        {"participant": "P01", "questionnaire": "about", "item": "games", "value": "other", "other": "<i>chess</i>"},
        {"participant": "P01", "questionnaire": "about", "item": "games", "value": "never", "other": None},
        {"participant": "P02", "questionnaire": "final", "item": "why", "value": "x" * 500, "other": None},
        {"participant": "P02", "questionnaire": "final", "item": "preferred", "value": "1", "other": None},
        {"participant": "P03", "questionnaire": "final", "item": "why", "value": "  ", "other": None},
    ]
    assert last_texts(answers, texts) == {"P01": "<i>chess</i>", "P02": "x" * MAX_TEXT_CHARS}
