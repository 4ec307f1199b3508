"""Positions whose answer the heuristic proves (lethal to take, blocks needed to survive), and the
check that an answer, as Forge reads it, keeps them: for the guard's tests and benchmark.
"""

from __future__ import annotations

from typing import Any

from agent.games.forge import guard, heuristic
from agent.games.forge.cards import read_effect
from agent.games.forge.decisions import BlockDecision
from agent.games.forge.fake.catalogue import OPP, Table
from agent.games.forge.models import ActionState, AttackState, BlockState, TargetState, parse_request
from agent.games.forge.view import build_view


def positions(dialect: str) -> list[tuple[str, dict[str, Any]]]:
    """(name, request) of each decided position; main decisions in ``dialect``."""
    out = []
    t = Table(turn=6, opp_life=3)
    t.lands(2, "Mountain")
    t.hand("Lightning Bolt", "Grizzly Bears", "Mountain")
    t.theirs("Serra Angel")
    out.append(("lethal burn, our main phase", t.actions(dialect)))
    out.append(("lethal burn's target", t.target("Lightning Bolt")))
    t = Table(turn=7, my_turn=False, phase="END_OF_TURN", opp_life=2)
    t.lands(1, "Mountain")
    t.hand("Shock")
    t.mine("Grizzly Bears")
    out.append(("lethal burn, their end step", t.actions(dialect)))
    t = Table(turn=8, phase="COMBAT_DECLARE_ATTACKERS", opp_life=4)
    t.mine("Grizzly Bears", "Centaur Courser", "Goblin Guide")
    t.theirs("Wall of Omens")
    out.append(("lethal attack through a blocker", t.attack()))
    t = Table(turn=8, phase="COMBAT_DECLARE_ATTACKERS", opp_life=4)
    t.mine("Serra Angel", "Grizzly Bears")
    t.theirs("Hill Giant")
    out.append(("lethal attack in the air", t.attack()))
    t = Table(turn=8, phase="COMBAT_DECLARE_ATTACKERS", opp_life=5)
    t.mine("Serra Angel", "Air Elemental")
    t.theirs("Hill Giant")
    out.append(("all in, one attacker is not lethal", t.attack()))  # 8 in the air against 5, 4 alone
    t = Table(turn=9, phase="COMBAT_DECLARE_BLOCKERS", my_turn=False, my_life=5)
    t.mine("Llanowar Elves", "Savannah Lions")
    out.append(("chump to survive", t.block(t.theirs("Craw Wurm", "Hill Giant"))))
    t = Table(turn=9, phase="COMBAT_DECLARE_BLOCKERS", my_turn=False, my_life=3)
    t.mine("Wall of Omens", "Llanowar Elves")
    out.append(("block to survive", t.block(t.theirs("Hill Giant", "Savannah Lions"))))
    return out


def decided(body: dict[str, Any]) -> str | None:
    """The kind of decided position ``body`` is (lethal burn, lethal target, lethal attack, survival
    block), as the guard defines them (docs/forge.md, "The guard"), or None: what a benchmark counts
    whatever the game or the catalogue put in front of the agent."""
    request = parse_request(body)
    view = build_view(request)
    opts = request.options
    if isinstance(opts, ActionState):
        lethal = any(o.index is not None and heuristic.burns_for_lethal(o, view) for o in opts.options)
        return "lethal burn" if lethal else None
    if isinstance(opts, TargetState):
        facts = view.facts(request.context.spellName)
        effect = read_effect(request.context.spellDescription or facts.oracle or opts.title)
        if opts.max < 1 or not effect.damage_to_players or effect.damage <= 0:
            return None
        for t in opts.targets:
            mine = t.name == view.me.name or (t.id is not None and t.id == view.me.id)
            life = t.life if t.life is not None else view.opp.life
            if t.type.lower() == "player" and not mine and 0 < life <= effect.damage:
                return "lethal target"
        return None
    if isinstance(opts, AttackState):
        player = heuristic.opponent_defender(opts, view)
        if player is None or view.opp.life <= 0:
            return None
        attackers = [a for _, a in heuristic.attacker_creatures(opts, view)]
        return "lethal attack" if heuristic.damage_through(attackers, view) >= view.opp.life else None
    assert isinstance(opts, BlockState)
    # Decided when taking it all is lethal and some blocks keep us alive (the guard finds them).
    return "survival block" if guard.review(request, view, BlockDecision(())) is not None else None


def kept(body: dict[str, Any], decision: dict[str, Any]) -> bool:
    """Whether Forge's reading of the answer keeps the decided position."""
    request = parse_request(body)
    view = build_view(request)
    opts = request.options
    if isinstance(opts, ActionState):
        index = decision.get("index")
        option = next((o for o in opts.options if o.index == index), None)
        return option is not None and heuristic.burns_for_lethal(option, view)
    if isinstance(opts, TargetState):
        names = {t.index: t.name for t in opts.targets}
        return OPP in {names.get(i) for i in decision.get("indices", [])}
    if isinstance(opts, AttackState):
        attackers = dict(heuristic.attacker_creatures(opts, view))
        chosen = [attackers[a] for a, _ in decision.get("pairs", []) if a in attackers]
        return heuristic.damage_through(chosen, view) >= view.opp.life
    assert isinstance(opts, BlockState)
    incoming, blockers = heuristic.block_sides(opts, view)
    pairs = [(int(p[0]), int(p[1])) for p in decision.get("pairs", [])]
    return heuristic.incoming_damage(incoming, dict(blockers), pairs) < view.me.life
