"""The guard: a model's valid choice is replaced only when it throws away a decided position.

Decided means the heuristic proves it from the request alone, with the same arithmetic it uses
for its own choices (docs/forge.md, "The guard"):

- **G1 lethal attack**: the damage sure to get through (C1) is at least the opponent's life, and
  the model's attack is not itself sure to be lethal: the heuristic's all-in attack is sent.
- **G2 lethal burn**: an offered spell or ability deals the opponent at least their life (A8)
  and the model chose something else (passing included): the burn is cast.
- **G3 lethal target**: the effect being targeted deals the opponent at least their life and the
  model left the opponent out: the opponent is targeted.
- **G4 survival**: the model's blocks let lethal damage through and adding chump blocks to them
  (or, failing that, the heuristic's blocks) keeps us alive: those blocks are sent.

Everything else stays the model's, however weak: studies measure the model. Pure functions.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from agent.games.forge import heuristic
from agent.games.forge.cards import read_effect
from agent.games.forge.decisions import ActionDecision, AttackDecision, BlockDecision, Decision, TargetDecision
from agent.games.forge.models import ActionState, AttackState, BlockState, ForgeRequest, TargetState
from agent.games.forge.view import View


@dataclass(frozen=True, slots=True)
class Override:
    decision: Decision
    rule: str
    """lethal-attack, lethal-burn, lethal-target or survival-block."""
    reason: str


def review(request: ForgeRequest, view: View, decision: Decision, tried: Collection[str] = ()) -> Override | None:
    """The replacement for a valid ``decision`` that throws away a decided position, else None."""
    opts = request.options
    if isinstance(opts, AttackState) and isinstance(decision, AttackDecision):
        return _lethal_attack(opts, view, decision)
    if isinstance(opts, ActionState) and isinstance(decision, ActionDecision):
        return _lethal_burn(opts, view, decision, tried)
    if isinstance(opts, TargetState) and isinstance(decision, TargetDecision):
        return _lethal_target(request, opts, view, decision)
    if isinstance(opts, BlockState) and isinstance(decision, BlockDecision):
        return _survival(opts, view, decision)
    return None


def _lethal_attack(opts: AttackState, view: View, decision: AttackDecision) -> Override | None:
    player = heuristic.opponent_defender(opts, view)
    if player is None or player.index is None or view.opp.life <= 0:
        return None
    attackers = heuristic.attacker_creatures(opts, view)
    best = heuristic.damage_through([a for _, a in attackers], view)
    if best < view.opp.life:
        return None
    chosen = {a for a, d in decision.pairs if d == player.index}
    theirs = heuristic.damage_through([a for i, a in attackers if i in chosen], view)
    if theirs >= view.opp.life:
        return None
    pairs = tuple((i, player.index) for i, a in attackers if a.power > 0)
    return Override(AttackDecision(pairs), "lethal-attack",
                    f"lethal attack: {best} damage gets through against {view.opp.life} life; "
                    f"the model's attack is sure of {theirs}")


def _lethal_burn(opts: ActionState, view: View, decision: ActionDecision, tried: Collection[str]) -> Override | None:
    lethal = [o for o in opts.options if o.index is not None and heuristic.action_key(view, o) not in tried
              and heuristic.burns_for_lethal(o, view)]
    if not lethal or decision.index in {o.index for o in lethal}:
        return None
    burn = lethal[0]
    chosen = next((o for o in opts.options if o.index == decision.index), None)
    what = "passed" if chosen is None or chosen.is_pass else f"chose {chosen.card_name or chosen.type}"
    return Override(ActionDecision(burn.index), "lethal-burn",
                    f"{burn.card_name} deals the opponent's last {view.opp.life} life; the model {what}")


def _lethal_target(request: ForgeRequest, opts: TargetState, view: View, decision: TargetDecision) -> Override | None:
    if opts.max < 1:
        return None
    facts = view.facts(request.context.spellName)
    effect = read_effect(request.context.spellDescription or facts.oracle or opts.title)
    if not effect.damage_to_players or effect.damage <= 0:
        return None
    for target in opts.targets:
        if target.type.lower() != "player" or target.index is None:
            continue
        mine = target.name == view.me.name or (target.id is not None and target.id == view.me.id)
        life = target.life if target.life is not None else view.opp.life
        if mine or life <= 0 or effect.damage < life:
            continue
        if target.index in decision.indices:
            return None
        others = [i for i in decision.indices if i != target.index]
        indices = (target.index, *others)[: opts.max]
        if len(indices) < opts.min:  # the model's own picks are valid and distinct: fill from them
            return None
        return Override(TargetDecision(indices), "lethal-target",
                        f"{request.context.spellName or 'the effect'} deals {target.name}'s last {life} life; "
                        "the model aimed elsewhere")
    return None


def _survival(opts: BlockState, view: View, decision: BlockDecision) -> Override | None:
    attackers, blockers = heuristic.block_sides(opts, view)
    by_index = dict(blockers)
    life = view.me.life
    taken = heuristic.incoming_damage(attackers, by_index, decision.pairs)
    if taken < life:
        return None
    # Keep the model's blocks and add chumps, biggest unblocked attacker first, cheapest blocker first.
    pairs = list(decision.pairs)
    used = {b for b, _ in pairs}
    blocked = {a for _, a in pairs}
    for ai, a, at_me in sorted(attackers, key=lambda x: -x[1].power):
        if heuristic.incoming_damage(attackers, by_index, pairs) < life:
            break
        if not at_me or ai in blocked or a.has("menace"):
            continue
        free = [(i, b) for i, b in blockers if i not in used and heuristic.can_block(b, a)]
        if free:
            bi, _ = min(free, key=lambda ib: ib[1].value)
            pairs.append((bi, ai))
            used.add(bi)
            blocked.add(ai)
    after = heuristic.incoming_damage(attackers, by_index, pairs)
    if after < life:
        return Override(BlockDecision(tuple(pairs)), "survival-block",
                        f"the model's blocks let {taken} damage through at {life} life; chump blocks keep "
                        f"it to {after}")
    theirs = heuristic.decide_blocks(opts, view).decision
    assert isinstance(theirs, BlockDecision)
    after = heuristic.incoming_damage(attackers, by_index, theirs.pairs)
    if after < life:
        return Override(theirs, "survival-block",
                        f"the model's blocks let {taken} damage through at {life} life; the heuristic's keep "
                        f"it to {after}")
    return None  # no block saves us: not a decision the guard can improve
