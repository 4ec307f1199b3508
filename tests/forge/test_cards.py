"""Reading card definitions: mana costs in both notations, keywords, and what a spell's text does."""

from __future__ import annotations

import pytest

from agent.games.forge.cards import card_facts, has_keyword, parse_mana_cost, read_effect
from agent.games.forge.fake.cards import CARDS


@pytest.mark.parametrize(("text", "value", "colours", "has_x"), [
    ("{2}{R}{R}", 4, {"R"}, False),
    ("2 R R", 4, {"R"}, False),
    ("{X}{R}", 1, {"R"}, True),
    ("{W/U}{W/U}", 2, {"W", "U"}, False),
    ("{2/B}", 2, {"B"}, False),
    ("{G/P}", 1, {"G"}, False),
    ("", 0, set(), False),
    ("no cost", 0, set(), False),
    ("{C}{10}", 11, set(), False),
])
def test_mana_costs(text: str, value: int, colours: set[str], has_x: bool) -> None:
    cost = parse_mana_cost(text)
    assert (cost.value, set(cost.colours), cost.has_x) == (value, colours, has_x)


def test_keywords_only_from_keyword_lines() -> None:
    assert has_keyword("Flying, vigilance", "flying") and has_keyword("Flying, vigilance", "vigilance")
    assert has_keyword("Flying\nDeathtouch\nLifelink", "lifelink")
    assert has_keyword("Reach", "reach")
    assert not has_keyword("Destroy target creature with flying.", "flying")
    assert has_keyword("Defender\nWhen Wall of Omens enters the battlefield, draw a card.", "defender")
    assert has_keyword("Trample (This creature can deal excess combat damage.)", "trample")
    assert has_keyword("Flash\nFlying", "flash")


def test_card_facts_from_definitions() -> None:
    angel = CARDS["Serra Angel"]
    facts = card_facts(angel.name, angel.mana_cost, angel.type, angel.oracle_text, "4", "4")
    assert (facts.cost.value, facts.power, facts.toughness) == (5, 4, 4)
    assert facts.is_creature and facts.is_permanent and not facts.is_instant and facts.has("flying")
    star = card_facts("Tarmogoyf", "{1}{G}", "Creature — Lhurgoyf", "", "*", "1+*")
    assert (star.power, star.toughness) == (0, 1)


@pytest.mark.parametrize(("name", "expected"), [
    ("Lightning Bolt", {"damage": 3, "damage_to_creatures": True, "damage_to_players": True}),
    ("Forked Bolt", {"damage": 2, "damage_to_creatures": True}),
    ("Doom Blade", {"destroys": True}),
    ("Giant Growth", {"pump": 6}),
    ("Counterspell", {"counters_spell": True}),
    ("Divination", {"draw": 2}),
    ("Healing Salve", {"gain": 3}),
    ("Wrath of God", {"sweeper": True}),
    ("Prodigal Sorcerer", {"damage": 1}),
])
def test_effects_read_from_oracle_text(name: str, expected: dict[str, object]) -> None:
    effect = read_effect(CARDS[name].oracle_text)
    for field, value in expected.items():
        assert getattr(effect, field) == value, (name, field)
    assert read_effect(CARDS["Giant Growth"].oracle_text).harmful is False
    assert read_effect(CARDS["Murder"].oracle_text).removal is True
