"""How Forge reads an answer (FORGE_FACTS), written apart from the agent's validator on purpose.

:func:`read_answer` takes the HTTP status and body the agent sent for one request and returns what
Forge would do with it: a :class:`Verdict` that is either accepted as sent, accepted after Forge
silently changed it (dropped invalid or duplicate target indices, skipped out-of-range pairs), an
error (Forge's own AI or manual input takes over), or fatal (the later client's uncaught parse
error). For the agent only "accepted as sent" counts as a valid answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

Outcome = Literal["ok", "changed", "error", "fatal"]


@dataclass
class Verdict:
    outcome: Outcome
    reason: str = ""
    decision: dict[str, Any] = field(default_factory=dict)
    """What Forge goes on with (after its own clean-up); empty on error."""

    @property
    def valid(self) -> bool:
        return self.outcome == "ok"


def _int_or_minus_one(value: Any) -> int:
    # The later client reads indices with a lenient getter: anything not an integer becomes -1.
    if isinstance(value, bool):
        return -1
    if isinstance(value, int):
        return value
    return -1


def _offered(items: list[dict[str, Any]]) -> list[int]:
    """The indices Forge assigned: an item's ``index``, else its list position."""
    out = []
    for i, item in enumerate(items):
        index = item.get("index") if isinstance(item, dict) else None
        out.append(i if index is None else int(index))
    return out


def read_answer(request: dict[str, Any], status: int, body: bytes, version: str = "later") -> Verdict:
    if status != 200:
        return Verdict("error", f"HTTP {status}")
    try:
        data = json.loads(body)
    except ValueError:
        # Early client: an error, Forge's AI decides. Later client: an uncaught parse exception.
        return Verdict("fatal" if version == "later" else "error", "body is not JSON")
    if not isinstance(data, dict) or not isinstance(data.get("decision"), dict):
        return Verdict("error", "no 'decision' object")
    decision = data["decision"]
    raw_context, raw_state = request.get("context"), request.get("actionState")
    context: dict[str, Any] = raw_context if isinstance(raw_context, dict) else {}
    state: dict[str, Any] = raw_state if isinstance(raw_state, dict) else {}
    kind = request.get("requestType") or context.get("requestType")
    dtype = decision.get("type")
    if kind in ("action", "possible_actions"):
        options = state.get("possible_actions") if kind == "possible_actions" else state.get("actions")
        options = options or []
        if dtype == "pass":
            if kind == "possible_actions":
                # PlayerControllerRemote accepts only its own type; anything else goes to Forge's AI.
                return Verdict("error", "possible_actions client accepts only type 'possible_actions'")
            return Verdict("ok", decision={"pass": True})
        if dtype != kind:
            return Verdict("error", f"decision type {dtype!r} for a {kind!r} request")
        index = _int_or_minus_one(decision.get("index"))
        offered = _offered(options)
        if index not in offered:
            return Verdict("error", f"action index {index} out of range")
        option = options[offered.index(index)]
        is_pass = option.get("type") == "pass_priority"
        return Verdict("ok", decision={"pass": True} if is_pass else {"index": index})
    if kind == "target":
        if dtype != "target":
            return Verdict("error", f"decision type {dtype!r} for a target request")
        offered = _offered(state.get("targets") or [])
        raw = decision.get("indices")
        if raw is None:
            if "index" not in decision:
                return Verdict("error", "target decision without index or indices")
            raw = [decision.get("index")]
        if not isinstance(raw, list):
            return Verdict("error", "indices is not a list")
        picked = [_int_or_minus_one(x) for x in raw]
        kept: list[int] = []
        for i in picked:
            if i in offered and i not in kept:
                kept.append(i)
        kept = kept[: int(state.get("max", 1))]
        if len(kept) < int(state.get("min", 1)):
            return Verdict("error", f"{len(kept)} valid targets, at least {state.get('min', 1)} needed")
        changed = kept != picked
        why = "invalid, duplicate or surplus indices dropped" if changed else ""
        return Verdict("changed" if changed else "ok", why,
                       {"indices": kept})
    if kind == "declare_attackers":
        if dtype != "declare_attackers":
            return Verdict("error", f"decision type {dtype!r} for declare_attackers")
        pairs = decision.get("attackers")
        if not isinstance(pairs, list):
            return Verdict("error", "attackers is not a list")
        attackers, defenders = _offered(state.get("attackers") or []), _offered(state.get("defenders") or [])
        kept_pairs, seen = [], set()
        for p in pairs:
            a = _int_or_minus_one(p.get("attacker_index")) if isinstance(p, dict) else -1
            d = _int_or_minus_one(p.get("defender_index")) if isinstance(p, dict) else -1
            if a in attackers and d in defenders and a not in seen:
                seen.add(a)
                kept_pairs.append((a, d))
        changed = len(kept_pairs) != len(pairs)
        return Verdict("changed" if changed else "ok", "out-of-range or repeated pairs skipped" if changed else "",
                       {"pairs": kept_pairs})
    if kind == "declare_blockers":
        if dtype != "declare_blockers":
            return Verdict("error", f"decision type {dtype!r} for declare_blockers")
        pairs = decision.get("blocks")
        if not isinstance(pairs, list):
            return Verdict("error", "blocks is not a list")
        blockers, attackers = _offered(state.get("blockers") or []), _offered(state.get("attackers") or [])
        kept_pairs, used = [], set()
        for p in pairs:
            b = _int_or_minus_one(p.get("blocker_index")) if isinstance(p, dict) else -1
            a = _int_or_minus_one(p.get("attacker_index")) if isinstance(p, dict) else -1
            if b in blockers and a in attackers and b not in used:
                used.add(b)
                kept_pairs.append((b, a))
        changed = len(kept_pairs) != len(pairs)
        return Verdict("changed" if changed else "ok", "out-of-range or duplicate blockers skipped" if changed else "",
                       {"pairs": kept_pairs})
    if kind == "reflect":
        return Verdict("ok")
    return Verdict("error", f"unknown request type {kind}")
