"""``--chat set``: a reply set (the format of ``benchmarks/tangram/bench_replies.py``) read and checked,
the items to play chosen, and what the scripted human does for an item: how many rounds bring the game
to the item's stage and which pieces the human moves.

A reply set is a YAML list of items: ``id``, ``lang`` (en | pt), ``objective`` (one of the game's six),
``stage`` (start: the empty board | early: one move each | mid: two each | done: played on until the
drawer is empty), optional ``partner`` (pieces the participant placed, that the line refers to),
optional ``moving`` (the line arrives while the agent's turn is under way), optional ``before`` (lines
said earlier in the game, each answered, oldest first), ``say`` (the line) and ``right_when`` (what a
right reply does).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from benchmarks.tangram.real_game.screen import HUMAN_ORDER

OBJECTIVES = ("A house", "A fish", "A human", "A rocket", "A cat", "A robot")
"""What the game draws from at start (Main_scene.gd's possible_tasks)."""
LANGUAGES = ("en", "pt")
STAGE_ROUNDS = {"start": 0, "early": 1, "mid": 2, "done": 10}
"""Rounds (the human's move, End Turn, the AI's turn) before the line; "done" stops earlier when the
drawer is empty."""
MAX_LOADS = 20
"""Page loads tried for the item's objective (the game draws one of six at random on each)."""


class SetError(ValueError):
    """A reply set that cannot be played; the message says where and why, in one line."""


@dataclass(frozen=True)
class SetItem:
    id: str
    lang: str
    objective: str
    stage: str
    say: str
    right_when: str
    partner: tuple[str, ...] = ()
    moving: bool = False
    before: tuple[str, ...] = ()


def _text(entry: dict[str, Any], key: str, where: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise SetError(f"{where}: '{key}' must be a non-empty text")
    return value.strip()


def _texts(entry: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = entry.get(key)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise SetError(f"{where}: '{key}' must be a list of texts")
    return tuple(v.strip() for v in value)


def parse_item(entry: Any, where: str) -> SetItem:
    if not isinstance(entry, dict):
        raise SetError(f"{where}: an item is a mapping")
    item_id = entry.get("id")
    if not isinstance(item_id, (str, int)) or not str(item_id).strip():
        raise SetError(f"{where}: 'id' is missing")
    where = f"{where} ({item_id})"
    lang, objective, stage = (_text(entry, k, where) for k in ("lang", "objective", "stage"))
    if lang not in LANGUAGES:
        raise SetError(f"{where}: lang {lang!r} is not one of {', '.join(LANGUAGES)}")
    if objective not in OBJECTIVES:
        raise SetError(f"{where}: objective {objective!r} is not one the game draws ({', '.join(OBJECTIVES)})")
    if stage not in STAGE_ROUNDS:
        raise SetError(f"{where}: stage {stage!r} is not one of {', '.join(STAGE_ROUNDS)}")
    partner = _texts(entry, "partner", where)
    unknown = [p for p in partner if p not in HUMAN_ORDER]
    if unknown:
        raise SetError(f"{where}: partner names no piece: {', '.join(unknown)} (pieces: {', '.join(HUMAN_ORDER)})")
    moving = entry.get("moving", False)
    if not isinstance(moving, bool):
        raise SetError(f"{where}: 'moving' must be true or false")
    return SetItem(id=str(item_id).strip(), lang=lang, objective=objective, stage=stage,
                   say=_text(entry, "say", where), right_when=_text(entry, "right_when", where),
                   partner=partner, moving=moving, before=_texts(entry, "before", where))


def parse_set(data: Any, where: str = "the set") -> list[SetItem]:
    if not isinstance(data, list) or not data:
        raise SetError(f"{where}: a reply set is a non-empty YAML list of items")
    items = [parse_item(entry, f"{where}: item {i}") for i, entry in enumerate(data, 1)]
    seen: set[str] = set()
    for item in items:
        if item.id in seen:
            raise SetError(f"{where}: id {item.id!r} is used twice")
        seen.add(item.id)
    return items


def read_set(path: Path) -> list[SetItem]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise SetError(f"{path}: {exc}".splitlines()[0]) from exc
    return parse_set(data, str(path))


def choose(items: Sequence[SetItem], ids: Iterable[str] | None) -> list[SetItem]:
    """The items to play: all of them in file order, or only ``ids`` (still in file order)."""
    if ids is None:
        return list(items)
    wanted = [i.strip() for i in ids if i.strip()]
    known = {item.id for item in items}
    unknown = [i for i in wanted if i not in known]
    if unknown or not wanted:
        raise SetError(f"--items: no item {', '.join(unknown) or '(none given)'} in the set")
    return [item for item in items if item.id in wanted]


def human_order(partner: Sequence[str], drawer: Iterable[str] | None = None) -> list[str]:
    """The pieces the scripted human tries, in order: the item's partner pieces first (while still in
    ``drawer``, when given), then the human's usual order (small pieces first)."""
    left = set(HUMAN_ORDER) if drawer is None else set(drawer)
    first = [p for p in partner if p in left]
    return first + [p for p in HUMAN_ORDER if p in left and p not in first]


def rounds_before(item: SetItem) -> int:
    """At most this many rounds bring the game to the item's stage."""
    return STAGE_ROUNDS[item.stage]


def file_name(item_id: str) -> str:
    """An item's id as part of a file name."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "_" for c in item_id)[:60] or "item"
