"""Simulated participants' answers to a study's questionnaires (a pilot's, sim/pilot.py).

Every numeric item of a scale is drawn around the middle of its range plus the effect of the
condition the page follows (``effects``: condition -> scale points, e.g. +1.0: one Likert point
up; a slider's points are its 0-100), with some noise, then rounded and kept in range; a
reverse-keyed item is answered the other way round, so its scale's score (reverse-keyed items
flipped) carries the effect. Attention checks are answered correctly; choices are drawn; texts
say they are simulated. Pure: the caller gives the random generator (seeded: a pilot repeats).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from agent.core.studies.questionnaires import (
    ChoiceItem,
    LikertItem,
    NumberItem,
    QuestionnaireSpec,
    SliderItem,
    TextItem,
)

NOISE = 0.15
"""The noise's standard deviation, as a share of the item's range."""
TEXT = "(simulated participant)"


def parse_effects(pairs: list[str], conditions: tuple[str, ...] | list[str]) -> dict[str, float]:
    """``CONDITION=+1.0`` pairs; ValueError (one line) for a bad pair or an unknown condition."""
    effects: dict[str, float] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise ValueError(f"--effect {pair!r}: CONDITION=POINTS, e.g. {conditions[0]}=+1.0")
        if name not in conditions:
            raise ValueError(f"--effect {pair!r}: no condition {name!r} (conditions: {', '.join(conditions)})")
        try:
            effects[name] = float(value)
        except ValueError:
            raise ValueError(f"--effect {pair!r}: {value!r} is not a number of scale points") from None
    return effects


def _around(rng: random.Random, low: float, high: float, shift: float, reverse: bool) -> float:
    middle = (low + high) / 2 + shift
    value = rng.gauss(middle, NOISE * (high - low))
    value = min(high, max(low, value))
    return low + high - value if reverse else value


def simulated_answers(spec: QuestionnaireSpec, condition: str | None, effects: Mapping[str, float],
                      rng: random.Random, partners: int) -> tuple[dict[str, Any], dict[str, str]]:
    """One page's answers and "other" texts, as a participant's page would send them."""
    shift = effects.get(condition, 0.0) if condition is not None else 0.0
    answers: dict[str, Any] = {}
    other: dict[str, str] = {}
    for item in spec.items:
        effect = shift if item.scale is not None else 0.0
        if isinstance(item, LikertItem):
            answers[item.id] = (item.correct if item.correct is not None
                                else round(_around(rng, 1, item.points, effect, item.reverse)))
        elif isinstance(item, SliderItem):
            answers[item.id] = round(_around(rng, 0, 100, effect, item.reverse), 1)
        elif isinstance(item, NumberItem):
            value = _around(rng, item.min, item.max, effect, item.reverse)
            answers[item.id] = round(value) if item.integer else value
        elif isinstance(item, TextItem):
            answers[item.id] = TEXT if item.required else ""
        elif isinstance(item, ChoiceItem):
            values = ([str(n) for n in range(1, partners + 1)] if item.options == "partners"
                      else [o.value for o in item.options])
            if item.correct is not None:
                answers[item.id] = item.correct
            elif item.kind == "single":
                answers[item.id] = rng.choice(values)
            else:
                answers[item.id] = rng.sample(values, rng.randint(1, len(values)))
    return answers, other
