"""The flow of participants, per condition sequence: invited -> consented -> started -> completed ->
excluded (by rule) -> analysed.

- invited: the participants entered on the sequence (the total row: the invitations written, when
  the study wrote any and they are more);
- consented: gave consent (everyone, when the study asks none);
- started: played a game (a withdrawn participant's games are deleted: counted as started);
- completed: played every game;
- excluded: left out by each rule (exclusions.py), every participant once;
- analysed: the rest with at least one value of a primary outcome.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from agent.analyze.results.exclusions import RULES

TOTAL = "all"


def flow_rows(participants: Sequence[Mapping[str, Any]], excluded: Mapping[str, str], analysed: Collection[str],
              consent_asked: bool, invited: int) -> list[dict[str, Any]]:
    """One row per condition sequence (in the plan's order) and a total row."""
    by_sequence: dict[int, list[Mapping[str, Any]]] = {}
    for p in participants:
        by_sequence.setdefault(int(p["sequence"]), []).append(p)
    rows = [_row(str(seq), str(people[0]["order"]), people, excluded, analysed, consent_asked)
            for seq, people in sorted(by_sequence.items())]
    total = _row(TOTAL, "", participants, excluded, analysed, consent_asked)
    total["invited"] = max(total["invited"], invited)
    return [*rows, total]


def _row(sequence: str, order: str, people: Sequence[Mapping[str, Any]], excluded: Mapping[str, str],
         analysed: Collection[str], consent_asked: bool) -> dict[str, Any]:
    ids = [str(p["participant"]) for p in people]
    consented = [p for p in people
                 if p.get("consent") == "given" or (not consent_asked and p.get("consent") != "refused")]
    started = [p for p in consented if int(p.get("attempts") or 0) > 0 or p.get("ended_early") == "withdrawn"]
    row: dict[str, Any] = {"sequence": sequence, "order": order, "invited": len(ids), "consented": len(consented),
                           "started": len(started),
                           "completed": sum(1 for p in people if p.get("state") == "completed")}
    for rule in RULES:
        row[f"excluded_{rule}"] = sum(1 for pid in ids if excluded.get(pid) == rule)
    row["analysed"] = sum(1 for pid in ids if pid in analysed and pid not in excluded)
    return row
