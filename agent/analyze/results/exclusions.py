"""Which participants the analysis plan's exclusion rules leave out, and by which rule.

Each participant is left out by the first rule that names them, in the order of :data:`RULES`, so
the counts add up (the flow shows each rule's count). Pure: the participants table and the
sessions table (joined to the study, with ``turns`` and ``turns_without_llm``) in, a mapping out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from agent.core.studies.analysis_plan import ExclusionSpec

RULES = ("withdrawn", "screened_out", "not_completed", "llm_unavailable")
"""The rules in the order they are applied."""


def llm_unavailable(sessions: Sequence[Mapping[str, Any]], share: float) -> set[str]:
    """Participants with a game (its last attempt: the one that counts) whose AI turns began without
    the model (an LLM outage or a spend cap) in more than ``share`` of its AI turns."""
    last: dict[tuple[str, Any], Mapping[str, Any]] = {}
    for s in sessions:
        pid = s.get("participant")
        if pid is None:
            continue
        key = (str(pid), s.get("game_position"))
        if key not in last or (s.get("attempt") or 0) >= (last[key].get("attempt") or 0):
            last[key] = s
    out = set()
    for (pid, _), s in last.items():
        turns = float(s.get("turns") or 0)
        without = float(s.get("turns_without_llm") or 0)
        if turns > 0 and math.isfinite(without) and without / turns > share:
            out.add(pid)
    return out


def excluded(participants: Sequence[Mapping[str, Any]], sessions: Sequence[Mapping[str, Any]],
             spec: ExclusionSpec) -> dict[str, str]:
    """Participant id -> the first rule (:data:`RULES`) that leaves them out; the rest are kept."""
    capped = llm_unavailable(sessions, spec.llm_unavailable_share) if spec.llm_unavailable_share is not None else set()
    out: dict[str, str] = {}
    for p in participants:
        pid = str(p["participant"])
        ended = p.get("ended_early")
        if spec.withdrawn and ended == "withdrawn":
            out[pid] = "withdrawn"
        elif spec.screened_out and ended == "screened_out":
            out[pid] = "screened_out"
        elif spec.not_completed and p.get("state") != "completed":
            out[pid] = "not_completed"
        elif pid in capped:
            out[pid] = "llm_unavailable"
    return out
