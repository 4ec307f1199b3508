"""The keyword rules, declared meaning by meaning with their priorities (planner/rules.py)."""

from __future__ import annotations

import pytest

from agent.games.tangram.dialogue.phrases import load_phrases
from agent.games.tangram.planner import load_library
from agent.games.tangram.planner.requests import Request
from agent.games.tangram.planner.rules import RULES, by_meaning, parse_request, reads, rule


def test_the_rules_are_read_in_the_order_of_their_priorities_each_taken_once() -> None:
    priorities = [d.priority for d in RULES]
    assert priorities == sorted(priorities)
    assert len(set(priorities)) == len(priorities)


def test_a_priority_taken_twice_stops_the_declaration() -> None:
    taken = RULES[0]
    with pytest.raises(ValueError, match=taken.meaning):
        rule("praise", taken.priority)(lambda r: None)
    assert len({d.priority for d in RULES}) == len(RULES)


def test_a_meaning_read_twice_stops_the_declaration() -> None:
    with pytest.raises(ValueError, match="strategy"):
        reads("strategy")(lambda m: Request("strategy"))


@pytest.mark.parametrize(("line", "intent"), [
    ("thanks for not moving my square", "thanks"),  # thanks (20) before a wish about pieces
    ("dont touch my square", "keep_piece"),
    ("what is the blue one for?", "where"),  # a question is answered, never acted on
    ("can you move blue left?", "move"),  # a request phrased as a question is acted on
    ("what do you think about the weather?", "other"),
    ("lorem ipsum", "other"),
])
def test_the_first_rule_that_reads_a_line_wins(line: str, intent: str) -> None:
    library = load_library()
    assert parse_request(line, library.figures["house"], library, load_phrases()).intent == intent


def test_a_meaning_without_a_reading_keeps_the_keywords_request() -> None:
    library = load_library()
    parsed = Request("move", piece="Blue")
    house = library.figures["house"]
    assert by_meaning("command", "move blue", parsed, house, library, load_phrases()) is parsed
    assert by_meaning("praise", "great", parsed, house, library, load_phrases()) == Request("praise")
