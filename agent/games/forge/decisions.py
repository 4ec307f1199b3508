"""Decisions as typed plain objects, and their wire form for each request type and dialect.

Indices are always the option's own ``index`` as Forge sent it (the list position when it sent
none), so a decision means the same thing in the request, the prompt, the transcript and the answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent.games.forge.models import ActionState, ForgeRequest


@dataclass(frozen=True, slots=True)
class ActionDecision:
    index: int | None
    """The chosen action's index; None passes priority."""


@dataclass(frozen=True, slots=True)
class TargetDecision:
    indices: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class AttackDecision:
    pairs: tuple[tuple[int, int], ...]
    """(attacker_index, defender_index) pairs; empty means no attack."""


@dataclass(frozen=True, slots=True)
class BlockDecision:
    pairs: tuple[tuple[int, int], ...]
    """(blocker_index, attacker_index) pairs; empty means no blocks."""


Decision = ActionDecision | TargetDecision | AttackDecision | BlockDecision


def pass_index(options: ActionState) -> int | None:
    """The index of the offered pass_priority option, if there is one."""
    for option in options.options:
        if option.is_pass:
            return option.index
    return None


def encode(request: ForgeRequest, decision: Decision) -> dict[str, Any]:
    """The response body Forge reads, in the form both client versions accept (docs/forge.md)."""
    kind = request.request_type
    if isinstance(decision, ActionDecision):
        assert isinstance(request.options, ActionState)
        index = decision.index
        if index is None:
            # Choosing the pass option by index works for the spec, for the client that accepts
            # only its own request type, and for the seed ("ForgeHeadless translates it").
            index = pass_index(request.options)
            if index is None:
                return {"decision": {"type": "pass"}}
        # Answer with the type the request named: "possible_actions" clients accept nothing else.
        return {"decision": {"type": kind, "index": index}}
    if isinstance(decision, TargetDecision):
        body: dict[str, Any] = {"type": "target"}
        if len(decision.indices) == 1:
            body["index"] = decision.indices[0]
        else:
            # Several (or none, when min is 0): the list, plus the first for readers of ``index``.
            body["indices"] = list(decision.indices)
            if decision.indices:
                body["index"] = decision.indices[0]
        return {"decision": body}
    if isinstance(decision, AttackDecision):
        return {"decision": {"type": "declare_attackers", "attackers": [
            {"attacker_index": a, "defender_index": d} for a, d in decision.pairs]}}
    return {"decision": {"type": "declare_blockers", "blocks": [
        {"blocker_index": b, "attacker_index": a} for b, a in decision.pairs]}}


def safe_decision(request: ForgeRequest) -> Decision:
    """The last resort when deciding itself failed (a bug): always valid, never clever."""
    from agent.games.forge.models import AttackState, BlockState, TargetState

    opts = request.options
    if isinstance(opts, ActionState):
        if request.request_type == "possible_actions" and pass_index(opts) is None and opts.options:
            return ActionDecision(opts.options[0].index)
        return ActionDecision(None)
    if isinstance(opts, TargetState):
        return TargetDecision(tuple(t.index for t in opts.targets[: opts.min] if t.index is not None))
    if isinstance(opts, AttackState):
        return AttackDecision(())
    if isinstance(opts, BlockState):
        return BlockDecision(())
    raise ValueError(f"{request.request_type} takes no decision")
