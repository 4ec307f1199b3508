"""Positions whose answer the heuristic proves (lethal to take, blocks needed to survive), and the
check that an answer, as Forge reads it, keeps them: for the guard's tests and benchmark.
"""

from __future__ import annotations

from typing import Any

from agent.games.forge import heuristic
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
    t = Table(turn=9, phase="COMBAT_DECLARE_BLOCKERS", my_turn=False, my_life=5)
    t.mine("Llanowar Elves", "Savannah Lions")
    out.append(("chump to survive", t.block(t.theirs("Craw Wurm", "Hill Giant"))))
    t = Table(turn=9, phase="COMBAT_DECLARE_BLOCKERS", my_turn=False, my_life=3)
    t.mine("Wall of Omens", "Llanowar Elves")
    out.append(("block to survive", t.block(t.theirs("Hill Giant", "Savannah Lions"))))
    return out


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
