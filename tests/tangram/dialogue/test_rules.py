"""The keyword rules, declared meaning by meaning with their priorities (dialogue/rules.py)."""

from __future__ import annotations

import pytest

from agent.games.tangram.dialogue.phrases import load_phrases
from agent.games.tangram.dialogue.requests import Request, correct_typos
from agent.games.tangram.dialogue.rules import RULES, by_meaning, parse_request, reads, rule
from agent.games.tangram.planner import load_library
from agent.games.tangram.planner.library import normalize_text


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


@pytest.mark.parametrize(("typed", "meant"), [
    ("plz put the smal grean triangle next to the purpel square",
     "please put the small green triangle next to the purple square"),
    ("pls put the yelow triangel beside the brwon one", "please put the yellow triangle beside the brown one"),
])
def test_a_misspelt_colour_is_read_as_the_piece_it_names_before_another_word_as_near(typed: str, meant: str) -> None:
    """'grean' is as near 'great' as 'green' (rapidfuzz ratio 80 each): the tie goes to the piece."""
    assert correct_typos(normalize_text(typed), load_phrases()).split()[2:] == meant.split()[2:]
