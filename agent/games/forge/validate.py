"""The one validator every answer passes through, whoever made it (heuristic or LLM).

:func:`problems` lists what is wrong with a decision for a request (empty = valid). :func:`repair`
keeps what is right: it drops out-of-range and duplicate entries and trims to ``max``; it gives
None when nothing valid is left to send (an action index that is not offered, fewer targets than
``min``), and the caller then answers with the heuristic's decision instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from agent.games.forge.decisions import (
    ActionDecision,
    AttackDecision,
    BlockDecision,
    Decision,
    TargetDecision,
    pass_index,
)
from agent.games.forge.models import ActionState, AttackState, BlockState, ForgeRequest, TargetState


class Indexed(Protocol):
    @property
    def index(self) -> int | None: ...


def _indices(options: Sequence[Indexed]) -> set[int | None]:
    return {o.index for o in options}


def problems(request: ForgeRequest, decision: Decision) -> list[str]:
    """Every reason Forge would reject or silently change this decision; empty when valid."""
    opts = request.options
    out: list[str] = []
    if isinstance(opts, ActionState):
        if not isinstance(decision, ActionDecision):
            return [f"a {request.request_type} request needs an action decision, not {type(decision).__name__}"]
        if decision.index is None:
            # With nothing offered, passing is all there is; with options but no pass option, the
            # possible_actions client has no way to read a pass.
            if request.request_type == "possible_actions" and pass_index(opts) is None and opts.options:
                out.append("passing is not offered in this possible_actions request")
        elif decision.index not in _indices(opts.options):
            out.append(f"action index {decision.index} is not offered ({_range(opts.options)})")
        return out
    if isinstance(opts, TargetState):
        if not isinstance(decision, TargetDecision):
            return [f"a target request needs a target decision, not {type(decision).__name__}"]
        valid = _indices(opts.targets)
        bad = [i for i in decision.indices if i not in valid]
        if bad:
            out.append(f"target indices {bad} are not offered ({_range(opts.targets)})")
        if len(set(decision.indices)) != len(decision.indices):
            out.append("a target is chosen twice")
        n = len({i for i in decision.indices if i in valid})
        if n < opts.min or len(decision.indices) > opts.max:
            out.append(f"{len(decision.indices)} targets chosen; between {opts.min} and {opts.max} are allowed")
        return out
    if isinstance(opts, AttackState):
        if not isinstance(decision, AttackDecision):
            return [f"a declare_attackers request needs an attack decision, not {type(decision).__name__}"]
        attackers, defenders = _indices(opts.attackers), _indices(opts.defenders)
        seen: set[int] = set()
        for a, d in decision.pairs:
            if a not in attackers:
                out.append(f"attacker index {a} is not offered ({_range(opts.attackers)})")
            if d not in defenders:
                out.append(f"defender index {d} is not offered ({_range(opts.defenders)})")
            if a in seen:
                out.append(f"attacker {a} is declared twice")
            seen.add(a)
        return out
    if isinstance(opts, BlockState):
        if not isinstance(decision, BlockDecision):
            return [f"a declare_blockers request needs a block decision, not {type(decision).__name__}"]
        blockers, attackers = _indices(opts.blockers), _indices(opts.attackers)
        used: set[int] = set()
        for b, a in decision.pairs:
            if b not in blockers:
                out.append(f"blocker index {b} is not offered ({_range(opts.blockers)})")
            if a not in attackers:
                out.append(f"attacker index {a} is not offered ({_range(opts.attackers)})")
            if b in used:
                out.append(f"blocker {b} blocks twice")
            used.add(b)
        return out
    return ["this request takes no decision"]


def repair(request: ForgeRequest, decision: Decision) -> Decision | None:
    """The valid part of ``decision``, or None when no valid decision can be kept from it."""
    if not problems(request, decision):
        return decision
    opts = request.options
    if isinstance(opts, TargetState) and isinstance(decision, TargetDecision):
        valid = _indices(opts.targets)
        kept: list[int] = []
        for i in decision.indices:
            if i in valid and i not in kept:
                kept.append(i)
        kept = kept[: opts.max]
        return TargetDecision(tuple(kept)) if len(kept) >= opts.min else None
    if isinstance(opts, AttackState) and isinstance(decision, AttackDecision):
        attackers, defenders = _indices(opts.attackers), _indices(opts.defenders)
        seen: set[int] = set()
        pairs = []
        for a, d in decision.pairs:
            if a in attackers and d in defenders and a not in seen:
                seen.add(a)
                pairs.append((a, d))
        return AttackDecision(tuple(pairs))
    if isinstance(opts, BlockState) and isinstance(decision, BlockDecision):
        blockers, attackers = _indices(opts.blockers), _indices(opts.attackers)
        used: set[int] = set()
        pairs = []
        for b, a in decision.pairs:
            if b in blockers and a in attackers and b not in used:
                used.add(b)
                pairs.append((b, a))
        return BlockDecision(tuple(pairs))
    return None


def _range(options: Sequence[Indexed]) -> str:
    if not options:
        return "none offered"
    idx = sorted(o.index for o in options if o.index is not None)
    return f"offered: {idx[0]}..{idx[-1]}" if idx == list(range(idx[0], idx[-1] + 1)) else f"offered: {idx}"
