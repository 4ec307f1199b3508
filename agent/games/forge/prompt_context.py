"""What the LLM sees and how its reply becomes a decision: pure functions, no I/O.

The prompt shows the state compactly (life, hands, battlefields, stack, the cards' oracle text)
and the options numbered with Forge's own indices, so the reply's numbers go to Forge unchanged.
Each request gets its own strict JSON schema (OpenAI's strict rules: every property required, no
extra properties), built from its options: ``reasoning`` first, then an index, a list of indices or
pairs, each an enum of the numbers offered, so a schema-following model names only legal options.
"""

from __future__ import annotations

from typing import Any

from agent.games.forge.decisions import (
    ActionDecision,
    AttackDecision,
    BlockDecision,
    Decision,
    TargetDecision,
    pass_index,
)
from agent.games.forge.models import ActionState, AttackState, BlockState, ForgeRequest, TargetState
from agent.games.forge.view import Side, View

TEMPLATE_NAMES = ("system", "decide")
PASS_NUMBER = -1
"""The number shown for passing when the request offers no pass option of its own."""

MAX_PROMPT_CARDS = 120
"""Distinct cards whose text the prompt shows; a board bigger than this is cut, not the call."""

_REASONING = {"type": "string", "description": "one short line: why (written before the choice)"}


def _obj(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def _choice(numbers: list[int], what: str) -> dict[str, Any]:
    """One of the offered numbers: an enum (OpenAI strict, xgrammar and llama.cpp grammars all
    take one), so a schema-following model cannot name anything else."""
    return {"type": "integer", "enum": numbers, "description": what}


def _offered(options: Any) -> list[int]:
    return [o.index for o in options if o.index is not None]


def schema_for(request: ForgeRequest) -> dict[str, Any]:
    """The reply schema of this request: ``reasoning`` first (models write fields in order, so the
    reason comes before the choice), then the choice, named among the request's own options.

    Each list's longest legal length is its ``maxItems`` (a target count's ``max``, each attacker
    declared once, each blocker blocking once): a small model under a grammar otherwise repeats
    one entry until ``max_tokens`` (Gemma 3 270M on llama-server did), and the answer's
    ``max_tokens`` is sized by it. The fewest (a target's ``min``) and duplicates are left to the
    validator. Callers ask only when every list here is non-empty (:func:`has_choice`).
    """
    opts = request.options
    if isinstance(opts, ActionState):
        numbers = _offered(opts.options)
        if pass_index(opts) is None and request.request_type == "action":
            numbers.append(PASS_NUMBER)
        return _obj({"reasoning": _REASONING, "index": _choice(numbers, "the number of the chosen action")})
    if isinstance(opts, TargetState):
        targets = _offered(opts.targets)
        return _obj({"reasoning": _REASONING, "indices": {
            "type": "array", "items": _choice(targets, "a target number"), "maxItems": min(opts.max, len(targets)),
            "description": f"between {opts.min} and {opts.max} different target numbers"}})
    if isinstance(opts, AttackState):
        attackers = _offered(opts.attackers)
        return _obj({"reasoning": _REASONING, "attacks": {"type": "array", "maxItems": len(attackers), "items": _obj({
            "attacker": _choice(attackers, "an attacker number"),
            "defender": _choice(_offered(opts.defenders), "a defender number")})}})
    assert isinstance(opts, BlockState)
    blockers = _offered(opts.blockers)
    return _obj({"reasoning": _REASONING, "blocks": {"type": "array", "maxItems": len(blockers), "items": _obj({
        "blocker": _choice(blockers, "a blocker number"),
        "attacker": _choice(_offered(opts.attackers), "an attacker number")})}})


def has_choice(request: ForgeRequest) -> bool:
    """Whether the request offers a choice to ask a model about: an attack with no attacker or no
    defender, blocks with no blocker or no attacker, or targets with none offered have just one
    answer (the empty one), which the heuristic gives."""
    opts = request.options
    if isinstance(opts, ActionState):
        return len(schema_for(request)["properties"]["index"]["enum"]) > 1
    if isinstance(opts, TargetState):
        return bool(opts.targets) and opts.max > 0
    if isinstance(opts, AttackState):
        return bool(_offered(opts.attackers)) and bool(_offered(opts.defenders))
    if isinstance(opts, BlockState):
        return bool(_offered(opts.blockers)) and bool(_offered(opts.attackers))
    return False


def schema_key(request: ForgeRequest) -> str:
    opts = request.options
    if isinstance(opts, ActionState):
        return "action"
    if isinstance(opts, TargetState):
        return "target"
    if isinstance(opts, AttackState):
        return "attack"
    return "block"


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _side(side: Side, view: View, show_hand: bool) -> dict[str, Any]:
    battlefield = []
    for card in side.permanents:
        facts = view.facts(card.name)
        bits = [card.name]
        if card.power is not None or facts.is_creature:
            p = card.power if card.power is not None else facts.power
            t = card.toughness if card.toughness is not None else facts.toughness
            bits.append(f"{p}/{t}")
        if card.tapped:
            bits.append("tapped")
        if card.sick:
            bits.append("summoning sick")
        battlefield.append(" ".join(str(b) for b in bits))
    return {"name": side.name, "life": side.life, "hand_size": side.hand_size,
            "hand": [c.name for c in side.hand if c.name] if show_hand else [],
            "battlefield": battlefield, "lands": side.lands, "untapped_lands": side.untapped_lands}


def _pt(power: int | None, toughness: int | None) -> str:
    return f" {power}/{toughness}" if power is not None else ""


def _options(request: ForgeRequest) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
    """(question, numbered options, extra) for the request type."""
    opts = request.options
    if isinstance(opts, ActionState):
        lines = []
        for o in opts.options:
            if o.is_pass:
                text = "pass priority (do nothing now)"
            else:
                text = f"{o.type.replace('_', ' ')}: {o.card_name}"
                if o.ability_description and o.type != "cast_spell":
                    text += f" — {_cut(o.ability_description, 200)}"
                if o.mana_cost:
                    text += f" (cost {o.mana_cost})"
                if o.requires_targets:
                    text += " [needs targets]"
            lines.append({"number": o.index, "text": text})
        if pass_index(opts) is None and request.request_type == "action":
            lines.append({"number": PASS_NUMBER, "text": "pass priority (do nothing now)"})
        return "Choose one action by its number.", lines, {}
    if isinstance(opts, TargetState):
        lines = [{"number": t.index, "text": f"{t.type} {t.name}" + (f" (life {t.life})" if t.life is not None else "")}
                 for t in opts.targets]
        q = (f"Choose targets for {request.context.spellName or opts.title}: between {opts.min} and {opts.max} "
             "different numbers.")
        return q, lines, {"min": opts.min, "max": opts.max}
    if isinstance(opts, AttackState):
        lines = [{"number": a.index, "text": f"attacker {a.name}{_pt(a.power, a.toughness)}"} for a in opts.attackers]
        defenders = [{"number": d.index, "text": f"{d.type} {d.name}"} for d in opts.defenders]
        return ("Declare attackers: pairs of an attacker number and a defender number; an empty list means "
                "no attack."), lines, {"defenders": defenders}
    assert isinstance(opts, BlockState)
    lines = [{"number": b.index, "text": f"blocker {b.name}{_pt(b.power, b.toughness)}"} for b in opts.blockers]
    attackers = [{"number": a.index, "text": f"{a.name} attacking {a.attacking or 'you'}"} for a in opts.attackers]
    return ("Declare blockers: pairs of a blocker number and an attacker number; each blocker at most once; "
            "an empty list means no blocks."), lines, {"attackers": attackers}


def build_context(request: ForgeRequest, view: View, memory: list[str], hint: str, max_oracle: int) -> dict[str, Any]:
    question, options, extra = _options(request)
    named = {c.name for c in view.me.hand} | {p.name for p in view.me.permanents + view.opp.permanents}
    named |= {s.card_name for s in view.stack} | {request.context.spellName}
    if isinstance(request.options, ActionState):
        named |= {o.card_name for o in request.options.options}
    names = sorted(n for n in named if n)
    cards = []
    for name in names[:MAX_PROMPT_CARDS]:
        f = view.facts(name)
        if not f.name:
            continue
        pt = f"{f.power}/{f.toughness}" if f.power is not None else ""
        cards.append({"name": name, "cost": request.state.card_definitions[name].mana_cost
                      if name in request.state.card_definitions else "", "type": f.type_line, "pt": pt,
                      "text": _cut(f.oracle, max_oracle)})
    return {
        "player": view.me.name or "you", "opponent": view.opp.name or "opponent",
        "turn": view.turn, "phase": view.phase or "unknown", "my_turn": view.my_turn,
        "me": _side(view.me, view, True), "opp": _side(view.opp, view, False),
        "stack": [f"{s.card_name} ({s.controller})" for s in view.stack],
        "cards": cards, "request_type": request.request_type, "question": question, "options": options,
        "min": extra.get("min", 0), "max": extra.get("max", 0),
        "defenders": extra.get("defenders", []), "attackers": extra.get("attackers", []),
        "spell": request.context.spellName, "spell_text": _cut(request.context.spellDescription, max_oracle),
        "memory": memory, "hint": hint, "answer_kind": schema_key(request),
        "compact": False,
    }


def sample_context() -> dict[str, Any]:
    """Every variable the templates may use, for the start-up check."""
    side = {"name": "A", "life": 20, "hand_size": 1, "hand": ["Forest"], "battlefield": ["Grizzly Bears 2/2"],
            "lands": 1, "untapped_lands": 1}
    return {"player": "A", "opponent": "B", "turn": 1, "phase": "MAIN1", "my_turn": True, "me": side, "opp": side,
            "stack": ["Shock (B)"], "cards": [{"name": "Forest", "cost": "", "type": "Land", "pt": "", "text": ""}],
            "request_type": "action", "question": "Choose.", "options": [{"number": 0, "text": "play land: Forest"}],
            "min": 1, "max": 1, "defenders": [{"number": 0, "text": "Player B"}],
            "attackers": [{"number": 0, "text": "x"}], "spell": "Shock", "spell_text": "deals 2 damage",
            "memory": ["turn 1: played Forest"], "hint": "play land Forest", "answer_kind": "action", "compact": False}


# ---- reading the reply ----------------------------------------------------------------------------


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


def _pairs(items: Any, first: str, second: str) -> tuple[tuple[int, int], ...] | None:
    if not isinstance(items, list):
        return None
    out = []
    for item in items[:200]:
        if isinstance(item, dict):
            a, b = _int(item.get(first)), _int(item.get(second))
        elif isinstance(item, list) and len(item) == 2:
            a, b = _int(item[0]), _int(item[1])
        else:
            return None
        if a is None or b is None:
            return None
        out.append((a, b))
    return tuple(out)


def read_reply(request: ForgeRequest, data: dict[str, Any]) -> tuple[Decision | None, str]:
    """The decision in the LLM's JSON, or (None, why not); range checks are the validator's job."""
    reason = data.get("reasoning", data.get("reason"))
    reason = _cut(reason, 200) if isinstance(reason, str) else ""
    opts = request.options
    if isinstance(opts, ActionState):
        index = _int(data.get("index"))
        if index is None:
            return None, "reply has no integer 'index'"
        return ActionDecision(None if index == PASS_NUMBER and pass_index(opts) is None else index), reason
    if isinstance(opts, TargetState):
        raw = data.get("indices", data.get("index"))
        raw = [raw] if not isinstance(raw, list) else raw
        ints = [_int(x) for x in raw[:200]]
        if any(i is None for i in ints):
            return None, "reply 'indices' holds something that is not an integer"
        return TargetDecision(tuple(i for i in ints if i is not None)), reason
    if isinstance(opts, AttackState):
        pairs = _pairs(data.get("attacks"), "attacker", "defender")
        if pairs is None:
            return None, "reply 'attacks' is not a list of pairs"
        return AttackDecision(pairs), reason
    pairs = _pairs(data.get("blocks"), "blocker", "attacker")
    return (BlockDecision(pairs), reason) if pairs is not None else (None, "reply 'blocks' is not a list of pairs")


def describe(request: ForgeRequest, decision: Decision) -> str:
    """A short line for memory and logs: what was chosen, by name."""
    opts = request.options
    if isinstance(opts, ActionState) and isinstance(decision, ActionDecision):
        if decision.index is None:
            return "passed"
        o = next((o for o in opts.options if o.index == decision.index), None)
        if o is None:
            return f"action {decision.index}"
        return "passed" if o.is_pass else f"{o.type.replace('_', ' ')} {o.card_name}".strip()
    if isinstance(opts, TargetState) and isinstance(decision, TargetDecision):
        names = [t.name for t in opts.targets if t.index in decision.indices]
        return f"targeted {', '.join(names) or 'nothing'} with {request.context.spellName or 'an effect'}"
    if isinstance(opts, AttackState) and isinstance(decision, AttackDecision):
        names = [a.name for a in opts.attackers if a.index in {p[0] for p in decision.pairs}]
        return f"attacked with {', '.join(names)}" if names else "did not attack"
    if isinstance(opts, BlockState) and isinstance(decision, BlockDecision):
        byidx = {b.index: b.name for b in opts.blockers}
        att = {a.index: a.name for a in opts.attackers}
        pairs = [f"{byidx.get(b, b)} blocks {att.get(a, a)}" for b, a in decision.pairs]
        return "; ".join(pairs) if pairs else "did not block"
    return type(decision).__name__
