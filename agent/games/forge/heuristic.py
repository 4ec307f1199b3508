"""The offline player: sensible Magic from the request alone, in well under a millisecond.

Each rule is numbered as in docs/forge.md ("Heuristic rules") and tested in
tests/forge/test_heuristic.py. The heuristic never returns an invalid decision: its choices are
drawn from the offered options only, and :func:`decide` passes them through the validator anyway.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from agent.games.forge.cards import CardFacts, Effect, parse_mana_cost, read_effect
from agent.games.forge.decisions import (
    ActionDecision,
    AttackDecision,
    BlockDecision,
    Decision,
    TargetDecision,
    pass_index,
)
from agent.games.forge.models import (
    ActionOption,
    ActionState,
    AttackState,
    BlockState,
    DefenderOption,
    ForgeRequest,
    TargetOption,
    TargetState,
)
from agent.games.forge.validate import problems
from agent.games.forge.view import Creature, View, build_view, make_creature


@dataclass(frozen=True, slots=True)
class Choice:
    decision: Decision
    reason: str


def decide(request: ForgeRequest, view: View | None = None, tried: Collection[str] = ()) -> Choice:
    """The heuristic's decision for any decision request.

    ``tried`` holds :func:`action_key` of actions already chosen this turn and phase; an action
    that is offered again after being chosen (it could not be paid, say) is not chosen again, so
    a game never loops on it.
    """
    view = view or build_view(request)
    opts = request.options
    if isinstance(opts, ActionState):
        choice = decide_action(request, opts, view, tried)
    elif isinstance(opts, TargetState):
        choice = decide_targets(request, opts, view)
    elif isinstance(opts, AttackState):
        choice = decide_attack(opts, view)
    elif isinstance(opts, BlockState):
        choice = decide_blocks(opts, view)
    else:
        raise ValueError(f"{request.request_type} takes no decision")
    wrong = problems(request, choice.decision)
    if wrong:  # a bug here must not reach Forge: say so loudly and fall back to the safest answer
        raise AssertionError(f"heuristic produced an invalid decision: {wrong}")
    return choice


def action_key(view: View, option: ActionOption) -> str:
    return f"{view.turn}:{view.phase}:{option.type}:{option.card_id or option.card_name}:{option.ability_description}"


# ---- rule A: main decisions ----------------------------------------------------------------------


def decide_action(request: ForgeRequest, opts: ActionState, view: View, tried: Collection[str] = ()) -> Choice:
    best: tuple[float, float, ActionOption] | None = None
    reason = "nothing worth doing"
    for option in opts.options:
        if option.is_pass:
            continue
        if action_key(view, option) in tried:
            continue  # A6: never repeat an action that came back
        score, why = score_action(option, view)
        if score <= 0:
            continue
        cost = parse_mana_cost(option.mana_cost).value
        key = (score, cost, option)
        if best is None or (key[0], key[1]) > (best[0], best[1]):
            best, reason = key, why
    if best is not None:
        return Choice(ActionDecision(best[2].index), reason)
    if request.request_type == "possible_actions" and pass_index(opts) is None and opts.options:
        # A7: this client cannot be told "pass" without a pass option: pick the least harmful.
        fallback = min(opts.options, key=lambda o: (score_action(o, view)[0] < 0, parse_mana_cost(o.mana_cost).value))
        return Choice(ActionDecision(fallback.index), "no pass option offered; least costly action")
    return Choice(ActionDecision(None), f"pass: {reason}")


def score_action(option: ActionOption, view: View) -> tuple[float, str]:
    kind = option.type.lower()
    name = option.card_name
    facts = view.facts(name)
    if kind == "play_land":
        if not view.sorcery_timing:
            return 0.0, "not the time for a land"
        # A1: a land drop is always worth it; prefer one that makes a colour the hand needs.
        needed = {c for card in view.me.hand if not card.is_land for c in card.cost.colours}
        fits = sum(1 for c in needed if c.lower() in (facts.oracle + " " + facts.type_line + " " + name).lower()
                   or _basic_colour(name) == c)
        return 100.0 + fits, f"play land {name}"
    if kind == "cast_spell":
        return score_spell(option, facts, view)
    if kind == "activate_ability":
        return score_ability(option, facts, view)
    return 0.0, f"unknown action type {option.type}"


_BASICS = {"plains": "W", "island": "U", "swamp": "B", "mountain": "R", "forest": "G"}


def _basic_colour(name: str) -> str | None:
    return next((c for basic, c in _BASICS.items() if basic in name.lower()), None)


def affordable(cost_text: str, facts: CardFacts, view: View) -> bool:
    """A2: only cast what the untapped lands can pay for (when the battlefield shows lands)."""
    cost = parse_mana_cost(cost_text) if cost_text else facts.cost
    if view.me.lands == 0:
        return True  # no land information (or mana from elsewhere): trust Forge's offer
    return cost.value <= view.me.untapped_lands


def score_spell(option: ActionOption, facts: CardFacts, view: View) -> tuple[float, str]:
    name = option.card_name
    if not affordable(option.mana_cost, facts, view):
        return 0.0, f"cannot afford {name}"
    effect = read_effect(facts.oracle or option.ability_description)
    cmc = (parse_mana_cost(option.mana_cost) if option.mana_cost else facts.cost).value
    instant_speed = facts.is_instant
    if not view.sorcery_timing and not instant_speed:
        return 0.0, f"{name} is sorcery-speed"
    opp_creatures = view.opp.creatures
    if lethal_to_opponent(effect, view):
        return 200.0, f"{name} for lethal"  # A8: above even the land drop
    # A3: counterspells only answer an opponent's spell on the stack.
    if effect.counters_spell:
        theirs = [s for s in view.stack if s.controller and s.controller != view.me.name]
        return (40.0 + cmc, f"counter {theirs[-1].card_name}") if theirs else (0.0, "nothing to counter")
    if effect.sweeper:
        swing = sum(c.value for c in opp_creatures) - sum(c.value for c in view.me.creatures)
        return (swing + cmc, f"{name} sweeps a board that favours them") if swing > 3 else (0.0, "sweeper not worth it")
    if effect.removal:
        killable = [c for c in opp_creatures if _kills(effect, c)]
        if killable:
            target = max(killable, key=lambda c: c.value)
            if not (view.sorcery_timing or view.combat or view.stack or _their_end_step(view)):
                return 0.0, "keep removal for combat, the main phase or their end step"
            return 20.0 + target.value + 0.5 * cmc, f"{name} removes {target.name}"
        late = (view.my_turn and "MAIN2" in view.phase.upper()) or _their_end_step(view)
        if effect.damage_to_players and late:
            return 2.0 + effect.damage * 0.5, f"{name} at the opponent's face"
        return 0.0, f"no good target for {name}"
    if facts.is_creature:
        p = facts.power or 0
        t = facts.toughness or 0
        stats = make_creature(view.definitions, name, None, p, t).value
        return 15.0 + stats + cmc, f"cast creature {name} ({p}/{t})"
    if effect.pump:
        return ((6.0 + effect.pump, f"{name} pumps a creature in combat") if _fighters(view)
                else (0.0, "keep the pump for a creature in combat"))
    if facts.is_permanent:
        if "enchant creature" in facts.oracle.lower() and not view.me.creatures:
            return 0.0, f"no creature to enchant with {name}"
        return 8.0 + cmc, f"cast {name}"
    if effect.draw:
        return 6.0 + 2 * effect.draw, f"{name} draws {effect.draw}"
    if effect.gain:
        return 2.0 + effect.gain * (1.0 if view.me.life <= 8 else 0.3), f"{name} gains {effect.gain} life"
    if option.requires_targets:
        return 0.0, f"unsure what {name} does"
    return 3.0 + cmc * 0.5, f"cast {name}"


def lethal_to_opponent(effect: Effect, view: View) -> bool:
    """The effect can deal the opponent at least their remaining life (A8)."""
    return effect.damage_to_players and 0 < view.opp.life <= effect.damage


def burns_for_lethal(option: ActionOption, view: View) -> bool:
    """A spell or ability that is offered now, can be paid and timed, and deals the opponent
    at least their remaining life: taking it wins the game."""
    kind = option.type.lower()
    facts = view.facts(option.card_name)
    if kind == "cast_spell":
        if not affordable(option.mana_cost, facts, view) or not (view.sorcery_timing or facts.is_instant):
            return False
        return lethal_to_opponent(read_effect(facts.oracle or option.ability_description), view)
    if kind == "activate_ability":
        cost_part, _, effect_part = option.ability_description.lower().partition(":")
        if "sacrifice" in cost_part or ("pay" in cost_part and "life" in cost_part):
            return False
        return lethal_to_opponent(read_effect(effect_part or cost_part), view)
    return False


def _fighters(view: View) -> list[Creature]:
    """Our creatures in combat now; when the client says nothing about combat, any of ours in a combat step."""
    if not view.combat:
        return []
    flagged = [c for c in view.me.creatures if c.in_combat]
    if flagged or any(c.in_combat for c in view.opp.creatures):
        return flagged
    return list(view.me.creatures)


def _their_end_step(view: View) -> bool:
    """The opponent's end step: the last chance to use instants before our turn (A9)."""
    return not view.my_turn and "END" in view.phase.upper()


def score_ability(option: ActionOption, facts: CardFacts, view: View) -> tuple[float, str]:
    text = option.ability_description or ""
    lowered = text.lower()
    cost_part, _, effect_part = lowered.partition(":")
    if not effect_part:
        effect_part = lowered
    if "add {" in effect_part or "add one mana" in effect_part:
        return 0.0, "mana abilities are paid by Forge"  # A4
    if "sacrifice" in cost_part or ("pay" in cost_part and "life" in cost_part):
        return 0.0, "ability costs too much"
    effect = read_effect(effect_part)
    if burns_for_lethal(option, view):
        return 200.0, f"{option.card_name} ability for lethal"  # A8
    if effect.removal:
        killable = [c for c in view.opp.creatures if _kills(effect, c)]
        if killable:
            t = max(killable, key=lambda c: c.value)
            return 12.0 + t.value, f"{option.card_name} ability removes {t.name}"
        return 0.0, "no target for the ability"
    if effect.draw and (not view.my_turn or "MAIN2" in view.phase.upper()):
        return 4.0, f"{option.card_name}: draw"
    if effect.damage and effect.damage_to_players and not view.my_turn:
        return 2.0, f"{option.card_name}: ping the opponent"
    return 0.0, f"ability of {option.card_name} not needed now"  # A5


def _kills(effect: Effect, c: Creature) -> bool:
    if c.has("hexproof"):
        return False
    if effect.destroys or effect.bounces:
        return not c.has("indestructible") or effect.bounces
    if effect.shrink:
        return effect.shrink >= c.toughness
    return effect.damage_to_creatures and effect.damage >= c.toughness and not c.has("indestructible")


# ---- rule T: targets ----------------------------------------------------------------------------


def decide_targets(request: ForgeRequest, opts: TargetState, view: View) -> Choice:
    spell = request.context.spellName
    facts = view.facts(spell)
    text = request.context.spellDescription or facts.oracle or opts.title
    effect = read_effect(text)
    beneficial = _beneficial(text, effect)
    scored = sorted(((score_target(t, effect, beneficial, view), t) for t in opts.targets),
                    key=lambda st: (-st[0], st[1].index or 0))
    chosen = [t for s, t in scored if s > 0][: opts.max]
    if len(chosen) < opts.min:
        # T4: a forced choice takes the least bad remaining options.
        rest = [t for s, t in scored if t not in chosen]
        chosen += rest[: opts.min - len(chosen)]
    if not chosen and opts.max >= 1 and scored and scored[0][0] == 0:
        chosen = [scored[0][1]]  # T5: unknown effect, optional target: take the first neutral one
    indices = tuple(t.index for t in chosen if t.index is not None)
    what = "helps" if beneficial else "hits"
    names = ", ".join(t.name for t in chosen) or "nothing"
    return Choice(TargetDecision(indices), f"{spell or 'effect'} {what} {names}")


def _beneficial(text: str, effect: Effect) -> bool:
    lowered = text.lower()
    if effect.harmful:
        return False
    return bool(effect.pump or effect.gain or "you control" in lowered or "gets +" in lowered
                or "gains " in lowered or "untap target" in lowered or "hexproof" in lowered)


def score_target(target: TargetOption, effect: Effect, beneficial: bool, view: View) -> float:
    is_player = target.type.lower() == "player"
    if is_player:
        mine = target.name == view.me.name or (target.id is not None and target.id == view.me.id)
        if beneficial:
            return 3.0 if mine else -5.0
        if mine:
            return -50.0
        # T2: damage to the opponent: certain win if lethal, else a modest gain.
        life = target.life if target.life is not None else view.opp.life
        if effect.damage and effect.damage >= life:
            return 100.0
        return 2.0 + (effect.damage if effect.damage_to_players else 0) * 0.5
    owner = view.owner_of(target.id, target.name)
    creature = view.creature(target.id, target.name)
    value = creature.value if creature else view.facts(target.name).cost.value + 1.0
    if owner is None:
        # A spell on the stack (counterspells) or a card we cannot place: harm goes to the opponent's.
        stack_owner = next((s.controller for s in view.stack if s.card_id == target.id), None)
        if stack_owner is not None:
            return (10.0 if stack_owner != view.me.name else -20.0) * (-1 if beneficial else 1)
        return 0.0
    if beneficial:
        if owner != "me":
            return -10.0
        if view.combat and effect.pump and creature is not None:
            # T7: a combat trick goes to a creature that is fighting.
            return 10.0 + value if creature in _fighters(view) else 0.5
        return 5.0 + value
    if owner == "me":
        return -20.0 - value  # T3: never hurt our own things unless forced
    # T1: the opposing creature the effect actually kills, the most valuable first; damage that
    # kills nothing is worth less than the same damage to the opponent's face.
    kills = creature is not None and _kills(effect, creature)
    if kills or effect.destroys or effect.bounces or effect.taps or effect.counters_spell:
        return 5.0 + value + (10.0 if kills else 0.0)
    return 1.0


# ---- rule C: attacking -------------------------------------------------------------------------


def _fight(a: Creature, b: Creature) -> tuple[bool, bool]:
    """(a dies, b dies) when a and b deal combat damage to each other."""
    a_first = a.has("first strike") or a.has("double strike")
    b_first = b.has("first strike") or b.has("double strike")
    a_lethal = a.power > 0 and (a.power >= b.toughness or a.has("deathtouch")) and not b.has("indestructible")
    b_lethal = b.power > 0 and (b.power >= a.toughness or b.has("deathtouch")) and not a.has("indestructible")
    if a_first and not b_first:
        return (False if a_lethal else b_lethal), a_lethal
    if b_first and not a_first:
        return b_lethal, (False if b_lethal else a_lethal)
    return b_lethal, a_lethal


def can_block(blocker: Creature, attacker: Creature) -> bool:
    if blocker.has("can't block") or blocker.tapped:
        return False
    if attacker.has("unblockable") or attacker.has("shadow"):
        return False
    return not (attacker.has("flying") and not (blocker.has("flying") or blocker.has("reach")))


def attacker_creatures(opts: AttackState, view: View) -> list[tuple[int, Creature]]:
    out = []
    for opt in opts.attackers:
        known = view.creature(opt.id, opt.name)
        power = opt.power if opt.power is not None else (known.power if known else None)
        tough = opt.toughness if opt.toughness is not None else (known.toughness if known else None)
        out.append((opt.index or 0, make_creature(view.definitions, opt.name, opt.id, power, tough)))
    return out


def potential_blockers(view: View) -> list[Creature]:
    return [c for c in view.opp.creatures if not c.tapped and not c.has("can't block")]


def damage_through(attackers: list[Creature], view: View) -> int:
    """Damage sure to reach the opponent: evasive attackers' power, plus what is left of the rest
    when each untapped potential blocker stops one of the biggest blockable ones (C1)."""
    blockers = potential_blockers(view)
    free = sum(a.power for a in attackers if not any(can_block(b, a) for b in blockers))
    blockable = sorted((a.power for a in attackers if any(can_block(b, a) for b in blockers)), reverse=True)
    return free + sum(blockable[len(blockers):])


def opponent_defender(opts: AttackState, view: View) -> DefenderOption | None:
    """The opposing player among the defenders, if offered."""
    return next((d for d in opts.defenders if d.type.lower() == "player" and d.name != view.me.name), None)


def decide_attack(opts: AttackState, view: View) -> Choice:
    defenders = opts.defenders
    if not opts.attackers or not defenders:
        return Choice(AttackDecision(()), "no attack possible")
    player = opponent_defender(opts, view)
    target = player or defenders[0]
    assert target.index is not None
    attackers = attacker_creatures(opts, view)
    blockers = potential_blockers(view)

    def eaten(a: Creature) -> bool:
        """Some blocker kills ``a`` and lives."""
        return any(can_block(b, a) and _fight(a, b) == (True, False) for b in blockers)

    # C1: lethal: even if each potential blocker stops one of our biggest blockable attackers.
    through = damage_through([a for _, a in attackers], view)
    life = view.opp.life if target is player else 10**6
    if attackers and through >= life:
        pairs = tuple((i, target.index) for i, a in attackers if a.power > 0)
        return Choice(AttackDecision(pairs), f"all in: {through} damage gets through against {life} life")
    # C2: attack with those no blocker can eat (blocked and killed by a blocker that survives).
    chosen = [(i, a) for i, a in attackers if a.power > 0 and not a.has("defender") and not eaten(a)]
    # C3: keep enough at home to survive the opponent's next attack.
    chosen = _keep_defence(chosen, attackers, view)
    if not chosen:
        return Choice(AttackDecision(()), "no safe attack")
    names = ", ".join(a.name for _, a in chosen)
    return Choice(AttackDecision(tuple((i, target.index) for i, _ in chosen)), f"safe attack with {names}")


def _crack_back(view: View, home: list[Creature]) -> int:
    """Damage the opponent's creatures deal next turn if each of ``home`` blocks one of the biggest."""
    theirs = sorted((c.power for c in view.opp.creatures if not c.has("defender")), reverse=True)
    return sum(theirs[len(home):])


def _keep_defence(chosen: list[tuple[int, Creature]], attackers: list[tuple[int, Creature]],
                  view: View) -> list[tuple[int, Creature]]:
    offered = {a.id for _, a in attackers}
    others = [c for c in view.me.creatures if not c.tapped and c.id not in offered]
    keep = list(chosen)
    while keep:
        home = others + [a for i, a in attackers if (i, a) not in keep] + [a for _, a in keep if a.has("vigilance")]
        if _crack_back(view, home) < view.me.life:
            break
        # Hold back the attacker that blocks best (toughest) first.
        keep.remove(max(keep, key=lambda ia: (not ia[1].has("vigilance"), ia[1].toughness, -ia[1].power)))
    return keep


# ---- rule B: blocking ----------------------------------------------------------------------------


IncomingSide = list[tuple[int, Creature, bool]]
"""(attacker index, creature, attacking us) for each attacker of a blockers request."""


def block_sides(opts: BlockState, view: View) -> tuple[IncomingSide, list[tuple[int, Creature]]]:
    """The attackers (with whether each attacks us) and our possible blockers, as creatures."""
    attackers: IncomingSide = []
    for inc in opts.attackers:
        known = view.creature(inc.id, inc.name)
        power = inc.power if inc.power is not None else (known.power if known else None)
        tough = inc.toughness if inc.toughness is not None else (known.toughness if known else None)
        at_me = not inc.attacking or inc.attacking == view.me.name or inc.attacking.lower() in ("you", "player")
        attackers.append((inc.index or 0, make_creature(view.definitions, inc.name, inc.id, power, tough), at_me))
    blockers: list[tuple[int, Creature]] = []
    for opt in opts.blockers:
        known = view.creature(opt.id, opt.name)
        power = opt.power if opt.power is not None else (known.power if known else None)
        tough = opt.toughness if opt.toughness is not None else (known.toughness if known else None)
        blockers.append((opt.index or 0, make_creature(view.definitions, opt.name, opt.id, power, tough)))
    return attackers, blockers


def incoming_damage(attackers: IncomingSide, blockers: dict[int, Creature],
                    pairs: Collection[tuple[int, int]]) -> int:
    """Combat damage to us when ``pairs`` (blocker index, attacker index) block: unblocked
    attackers at us (double strike twice), and trample beyond the blockers' toughness."""
    blocked_by: dict[int, list[Creature]] = {}
    for bi, target in pairs:
        if bi in blockers:
            blocked_by.setdefault(target, []).append(blockers[bi])
    total = 0
    for ai, attacker, at_me in attackers:
        if not at_me:
            continue
        strikes = 2 if attacker.has("double strike") else 1
        if ai not in blocked_by:
            total += attacker.power * strikes
        elif attacker.has("trample"):
            total += max(0, attacker.power - sum(b.toughness for b in blocked_by[ai]))
    return total


def decide_blocks(opts: BlockState, view: View) -> Choice:
    attackers, blockers = block_sides(opts, view)
    free = dict(blockers)
    blocks: dict[int, int] = {}  # attacker index -> blocker index
    notes: list[str] = []

    def usable(a: Creature) -> list[tuple[int, Creature]]:
        if a.has("menace"):
            return []  # menace needs two blockers; we do not double-block (B5)
        return [(i, b) for i, b in free.items() if can_block(b, a)]

    by_threat = sorted(attackers, key=lambda x: -x[1].value)
    # B1: blocks that kill the attacker and survive, with the least valuable blocker able to.
    for ai, a, _ in by_threat:
        options = [(i, b) for i, b in usable(a) if _fight(b, a) == (False, True)]
        if options:
            bi, b = min(options, key=lambda ib: ib[1].value)
            blocks[ai] = bi
            del free[bi]
            notes.append(f"{b.name} eats {a.name}")
    # B2: even trades that cost us no more than they cost them.
    for ai, a, _ in by_threat:
        if ai in blocks:
            continue
        options = [(i, b) for i, b in usable(a) if _fight(b, a) == (True, True) and b.value <= a.value]
        if options:
            bi, b = min(options, key=lambda ib: ib[1].value)
            blocks[ai] = bi
            del free[bi]
            notes.append(f"{b.name} trades with {a.name}")
    # B3: walls: blocks where nothing dies still stop damage, biggest attacker first.
    for ai, a, at_me in sorted(attackers, key=lambda x: -x[1].power):
        if ai in blocks or not at_me:
            continue
        options = [(i, b) for i, b in usable(a) if _fight(b, a) == (False, False)]
        if options:
            bi, b = max(options, key=lambda ib: ib[1].toughness)
            blocks[ai] = bi
            del free[bi]
            notes.append(f"{b.name} walls {a.name}")

    # B4: survive: chump the biggest unblocked attackers while the rest would be lethal.
    def incoming() -> int:
        return incoming_damage(attackers, dict(blockers), [(bi, ai) for ai, bi in blocks.items()])

    for ai, a, at_me in sorted(attackers, key=lambda x: -x[1].power):
        if incoming() < view.me.life:
            break
        if ai in blocks or not at_me:
            continue
        options = usable(a)
        if options:
            bi, b = min(options, key=lambda ib: ib[1].value)
            blocks[ai] = bi
            del free[bi]
            notes.append(f"{b.name} chumps {a.name} to survive")
    pairs = tuple(sorted((bi, ai) for ai, bi in blocks.items()))
    return Choice(BlockDecision(pairs), "; ".join(notes) or f"no good blocks; taking {incoming()}")
