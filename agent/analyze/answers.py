"""A study's questionnaire answers as tables (``--study``): long, wide and the items' codebook.

- ``answers`` (long): one row per answer: the participant, the page (step, questionnaire, when in
  the flow), the game it follows (condition, order, game position; none before the first or after
  the last game), the item, its value as given (several choices joined with ``;``), an "other"
  choice's text, the scored value (the scale's count: reverse-keyed items flipped, see
  :func:`agent.core.studies.questionnaires.scored`), the partner's condition for an item asking
  for a partner by their place (``options: partners``; the place stays in ``value``), the language
  and the seconds the page was open.
- ``scores`` (wide): one row per participant and condition: each scale's score (the mean of its
  scored items on the pages after that condition's games) beside that condition's game measures.
  Scales of the pages before the first and after the last game belong to no condition: they are
  in ``answers`` only.
- ``items``: every item of every questionnaire, its text in each of the study's languages, kind,
  range and labels, scale, reverse flag and attention check.

Pure functions over rows the store gave.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from agent.core.studies.plan import Plan
from agent.core.studies.questionnaires import (
    OTHER,
    ChoiceItem,
    LikertItem,
    NumberItem,
    Questionnaires,
    SliderItem,
    Step,
    TextItem,
    scored,
)
from agent.core.studies.store import PageRow

SCORE_PREFIX = "score_"
"""The wide table's column of a scale: ``score_<scale>``."""
MEASURES = {"pieces_placed": "final_pieces_on_board", "ai_turns": "turns", "chats": "chats",
            "duration_s": "duration_s"}
"""The wide table's game measures: its column, the sessions table's."""

People = Mapping[str, tuple[int, tuple[str, ...]]]
"""Each participant's order sequence (1-based) and conditions in their order."""


def _text_value(value: Any) -> Any:
    if isinstance(value, list):
        return ";".join(str(v) for v in value)
    return value


def _partner(item: Any, value: Any, order: Sequence[str]) -> str | None:
    """The condition(s) a partner-choice answer names (its value is the partner's place)."""
    if not isinstance(item, ChoiceItem) or item.options != "partners" or value is None:
        return None
    places = value if isinstance(value, list) else [value]
    names = [order[int(p) - 1] if str(p).isdigit() and 1 <= int(p) <= len(order) else str(p) for p in places]
    return ";".join(names)


def answer_rows(q: Questionnaires, plan: Plan, people: People, pages: Sequence[PageRow],
                answers: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The long table: one row per stored answer, in the store's order."""
    steps: dict[str, dict[int, Step]] = {}
    for pid, (sequence, _) in people.items():
        steps[pid] = {s.index: s for s in q.steps(plan.slots(sequence - 1))}
    seconds = {(p.participant, p.step): p.seconds for p in pages}
    rows = []
    for a in answers:
        pid, step_no = str(a["participant"]), int(a["step"])
        step = steps.get(pid, {}).get(step_no)
        spec = q.specs.get(str(a["questionnaire"]))
        item = next((i for i in spec.items if i.id == a["item"]), None) if spec else None
        value = a.get("value")
        order = people.get(pid, (0, ()))[1]
        correct = getattr(item, "correct", None)
        rows.append({
            "participant": pid, "step": step_no, "questionnaire": a["questionnaire"],
            "when": step.when if step else None,
            "condition": step.condition if step else None, "order": step.order if step else None,
            "game_position": step.position if step and step.when == "after_each" else None,
            "item": a["item"], "kind": item.kind if item is not None else None,
            "value": _text_value(value), "other": a.get("other"),
            "partner_condition": _partner(item, value, order),
            "scale": getattr(item, "scale", None), "scored": scored(item, value) if item is not None else None,
            "failed_check": (value != correct) if correct is not None else None,
            "language": a.get("language"),
            "seconds_on_page": a.get("seconds", seconds.get((pid, step_no))),
        })
    return rows


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def score_rows(people: People, answers: Sequence[Mapping[str, Any]], sessions: Sequence[Mapping[str, Any]],
               items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The wide table: one row per participant and condition with a game or an answer.

    Game measures come from the last attempt of each of that condition's games (an interrupted
    attempt was played again: the last is the game that counts), summed over its games; the LLM
    cost over every attempt (each was paid for). ``items``: :func:`item_rows` (which scales there are)."""
    scales = sorted({str(i["scale"]) for i in items if i.get("scale")})
    rows = []
    for pid, (_, order) in people.items():
        for place, condition in enumerate(order, start=1):
            mine = [s for s in sessions if s.get("participant") == pid and s.get("condition") == condition]
            given = [a for a in answers if a["participant"] == pid and a["condition"] == condition]
            if not mine and not given:
                continue
            last: dict[Any, Mapping[str, Any]] = {}
            for s in mine:
                at = s.get("game_position")
                if at not in last or (_number(s.get("attempt")) or 0) >= (_number(last[at].get("attempt")) or 0):
                    last[at] = s
            row: dict[str, Any] = {"participant": pid, "condition": condition, "order": place,
                                   "games": len(last),
                                   "games_completed": sum(1 for s in last.values() if s.get("game_completed") is True)}
            for column, source in MEASURES.items():
                values = [v for v in (_number(s.get(source)) for s in last.values()) if v is not None]
                row[column] = sum(values) if values else None
            costs = [v for v in (_number(s.get("est_cost_usd")) for s in mine) if v is not None]
            row["llm_cost_usd"] = sum(costs) if costs else None
            for scale in scales:
                values = [float(a["scored"]) for a in given if a["scale"] == scale and a["scored"] is not None]
                row[f"{SCORE_PREFIX}{scale}"] = _mean(values)
            rows.append(row)
    return rows


def _flow_places(q: Questionnaires) -> dict[str, list[str]]:
    places: dict[str, list[str]] = {}
    flow = q.flow
    if flow.before_first:
        places.setdefault(flow.before_first, []).append("before_first")
    after = flow.after_each
    if isinstance(after, dict):
        for condition, name in after.items():
            places.setdefault(name, []).append(f"after_each ({condition})")
    elif after:
        places.setdefault(after, []).append("after_each")
    if flow.after_last:
        places.setdefault(flow.after_last, []).append("after_last")
    return places


def item_rows(q: Questionnaires, partners: int) -> list[dict[str, Any]]:
    """The items' codebook: one row per item of every questionnaire, in the study file's order
    (``partners``: how many partners a participant has)."""
    places = _flow_places(q)
    rows = []
    for name, spec in q.specs.items():
        for n, item in enumerate(spec.items, start=1):
            row: dict[str, Any] = {"questionnaire": name, "when": "; ".join(places.get(name, [])),
                                   "item_order": spec.order, "position": n, "item": item.id, "kind": item.kind,
                                   "required": item.required, "scale": item.scale, "reverse": item.reverse,
                                   "attention_check": getattr(item, "correct", None) is not None,
                                   "correct": getattr(item, "correct", None)}
            low: float | None = None
            high: float | None = None
            if isinstance(item, LikertItem):
                low, high = 1, item.points
            elif isinstance(item, SliderItem):
                low, high = 0, 100
            elif isinstance(item, NumberItem):
                low, high = item.min, item.max
            row["min"], row["max"] = low, high
            row["max_chars"] = item.limit if isinstance(item, TextItem) else None
            for lang in q.languages:
                row[f"text_{lang}"] = item.text.get(lang)
                row[f"labels_{lang}"] = _labels(item, lang, q, partners)
            rows.append(row)
    return rows


def _labels(item: Any, lang: str, q: Questionnaires, partners: int) -> str | None:
    """What the answers mean, in ``lang``: ``value: label`` pairs joined with `` | ``."""
    def say(text: Mapping[str, str]) -> str:
        return text.get(lang) or next(iter(text.values()))

    if isinstance(item, LikertItem):
        if item.labels:
            return " | ".join(f"{n}: {say(t)}" for n, t in enumerate(item.labels, start=1))
        assert item.ends is not None
        return f"1: {say(item.ends[0])} | {item.points}: {say(item.ends[1])}"
    if isinstance(item, SliderItem):
        return f"0: {say(item.ends[0])} | 100: {say(item.ends[1])}"
    if isinstance(item, ChoiceItem):
        if item.options == "partners":
            # The place in the participant's order; partner_condition (answers) names the condition.
            pairs = [f"{n}: {q.place_name(n, lang)}" for n in range(1, partners + 1)]
        else:
            pairs = [f"{o.value}: {say(o.text)}" for o in item.options]
        if item.other:
            pairs.append(f"{OTHER}: {say(item.other)} (its text in 'other')")
        return " | ".join(pairs)
    return None
