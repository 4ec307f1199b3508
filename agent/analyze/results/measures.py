"""The analysis plan's outcomes as long data: one row per analysed participant and condition.

An outcome is a questionnaire scale (the scores table's ``score_<scale>``) or a game measure (the
scores table's own column: pieces_placed, ai_turns, duration_s, chats, games_completed,
llm_cost_usd); the scores table (analyze/answers.py) already holds both per participant and
condition, so nothing is computed again here. Also each scale's items per participant and condition
(scored: reverse-keyed items flipped), for its reliability.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agent.analyze.answers import SCORE_PREFIX
from agent.core.studies.analysis_plan import GAME_MEASURES

if TYPE_CHECKING:
    import pandas as pd

LONG_COLUMNS = ("participant", "condition", "position", "value")


def column_of(outcome: str) -> str:
    """The scores table's column of an outcome."""
    return outcome if outcome in GAME_MEASURES else f"{SCORE_PREFIX}{outcome}"


def kind_of(outcome: str) -> str:
    return "game measure" if outcome in GAME_MEASURES else "questionnaire scale"


def _finite(value: Any) -> float | None:
    if value is None or isinstance(value, bool | str):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def long_data(scores: Sequence[Mapping[str, Any]], outcome: str, keep: Collection[str]) -> pd.DataFrame:
    """The outcome of the participants in ``keep``: participant, condition, position (the
    condition's 1-based place in the participant's order), value; rows without a value left out,
    sorted by participant then position (the same data gives the same frame)."""
    import pandas as pd

    column = column_of(outcome)
    rows = [{"participant": str(r["participant"]), "condition": str(r["condition"]), "position": int(r["order"]),
             "value": value}
            for r in scores if str(r["participant"]) in keep and (value := _finite(r.get(column))) is not None]
    rows.sort(key=lambda r: (r["participant"], r["position"], r["condition"]))
    frame = pd.DataFrame(rows, columns=list(LONG_COLUMNS))
    return frame.astype({"participant": str, "condition": str, "position": int, "value": float})


def scale_items(answers: Sequence[Mapping[str, Any]], scale: str, keep: Collection[str]) -> pd.DataFrame:
    """The scale's scored items, one row per participant and condition (the pages after each game),
    one column per item, in item order of first appearance; rows missing an item left out."""
    import pandas as pd

    cells: dict[tuple[str, str], dict[str, float]] = {}
    items: list[str] = []
    for a in answers:
        if a.get("scale") != scale or a.get("when") != "after_each" or str(a["participant"]) not in keep:
            continue
        value = _finite(a.get("scored"))
        if value is None:
            continue
        if a["item"] not in items:
            items.append(str(a["item"]))
        cells.setdefault((str(a["participant"]), str(a["condition"])), {})[str(a["item"])] = value
    keys = sorted(k for k, row in cells.items() if len(row) == len(items))
    frame = pd.DataFrame([cells[k] for k in keys], columns=items,
                         index=[f"{p} / {c}" for p, c in keys], dtype=float)
    return frame
