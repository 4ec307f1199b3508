"""The game as the deciding player sees it: whose side is whose, creatures with their stats, mana.

Built once per request from the request alone (pure), so the heuristic, the prompt and the tests
all read the same facts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent.games.forge.cards import UNKNOWN, CardFacts, card_facts
from agent.games.forge.models import CardRef, ForgeRequest, PlayerState, StackItem

KEYWORD_VALUE = {
    "flying": 1.5, "first strike": 1.0, "double strike": 2.0, "deathtouch": 1.5, "lifelink": 1.0,
    "trample": 0.5, "vigilance": 0.5, "hexproof": 0.5, "indestructible": 2.0, "menace": 0.75, "reach": 0.5,
    "unblockable": 1.5,
}


@dataclass(frozen=True, slots=True)
class Creature:
    """A creature (or anything with power and toughness) in play or in combat."""

    id: str | None
    name: str
    power: int
    toughness: int
    facts: CardFacts
    tapped: bool = False
    sick: bool = False
    in_combat: bool = False
    """Attacking or blocking right now (from the client's flags or its ``combat`` object)."""

    def has(self, keyword: str) -> bool:
        return self.facts.has(keyword)

    @property
    def value(self) -> float:
        """How much losing it hurts: stats, keywords and what it cost."""
        v = self.power + 0.5 * self.toughness + 0.25 * self.facts.cost.value
        v += sum(bonus for kw, bonus in KEYWORD_VALUE.items() if self.has(kw))
        if self.has("defender"):
            v -= 0.5 * self.power
        return v


@dataclass(frozen=True, slots=True)
class Side:
    id: str | None
    name: str
    life: int
    hand: tuple[CardFacts, ...]
    hand_size: int
    permanents: tuple[CardRef, ...]
    creatures: tuple[Creature, ...]
    lands: int
    untapped_lands: int
    """Untapped lands plus untapped mana creatures that can tap now: what pays for spells."""


@dataclass(frozen=True)
class View:
    me: Side
    opp: Side
    my_turn: bool
    phase: str
    turn: int
    stack: tuple[StackItem, ...]
    definitions: dict[str, CardFacts] = field(repr=False)

    def facts(self, name: str) -> CardFacts:
        return self.definitions.get(name) or self.definitions.get(name.lower()) or UNKNOWN

    @property
    def main_phase(self) -> bool:
        return "MAIN" in self.phase.upper()

    @property
    def combat(self) -> bool:
        return "COMBAT" in self.phase.upper()

    @property
    def sorcery_timing(self) -> bool:
        return self.my_turn and self.main_phase and not self.stack

    def owner_of(self, card_id: str | None, name: str = "") -> str | None:
        """'me', 'opp' or None for a permanent id (or, failing that, a unique name)."""
        for who, side in (("me", self.me), ("opp", self.opp)):
            if card_id is not None and any(p.id == card_id for p in side.permanents):
                return who
        if name:
            mine = any(p.name == name for p in self.me.permanents)
            theirs = any(p.name == name for p in self.opp.permanents)
            if mine != theirs:
                return "me" if mine else "opp"
        return None

    def creature(self, card_id: str | None, name: str) -> Creature | None:
        for side in (self.me, self.opp):
            for c in side.creatures:
                if card_id is not None and c.id == card_id:
                    return c
        return None


def make_creature(view_defs: dict[str, CardFacts], name: str, card_id: str | None, power: int | None,
                  toughness: int | None, tapped: bool = False, sick: bool = False, in_combat: bool = False) -> Creature:
    facts = view_defs.get(name) or UNKNOWN
    p = power if power is not None else facts.power
    t = toughness if toughness is not None else facts.toughness
    return Creature(card_id, name, p or 0, t if t is not None else 1, facts, tapped, sick, in_combat)


MAX_COMBAT_IDS = 400


def combat_ids(combat: Any) -> frozenset[str]:
    """Ids of the cards in a ``combat`` object, whatever its shape (lists of attackers and blockers,
    or pairings): every ``id``/``card_id`` (and ``blocker_id``/``attacker_id``) found, bounded."""
    found: set[str] = set()
    stack = [combat]
    while stack and len(found) < MAX_COMBAT_IDS:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if key in ("id", "card_id", "attacker_id", "blocker_id") and isinstance(value, (int, str)):
                    found.add(str(value))
                elif isinstance(value, (dict, list)):
                    stack.append(value)
        elif isinstance(item, list):
            stack.extend(item[:MAX_COMBAT_IDS])
    return frozenset(found)


def _definitions(request: ForgeRequest) -> dict[str, CardFacts]:
    out: dict[str, CardFacts] = {}
    for key, d in request.state.card_definitions.items():
        name = d.name or key
        facts = card_facts(name, d.mana_cost, d.type, d.oracle_text, d.power, d.toughness)
        out[key] = facts
        out.setdefault(name, facts)
    return out


def _side(player: PlayerState, defs: dict[str, CardFacts], fighting: frozenset[str]) -> Side:
    creatures = []
    lands = untapped = 0
    for card in player.battlefield:
        facts = defs.get(card.name) or UNKNOWN
        if facts.is_land:
            lands += 1
            untapped += not card.tapped
        if facts.is_creature or (card.power is not None and card.toughness is not None and not facts.is_land):
            in_combat = card.attacking or card.blocking or (card.id is not None and card.id in fighting)
            if not facts.is_land and not card.tapped and not card.sick and "{t}: add" in facts.oracle.lower():
                untapped += 1  # a mana creature (Llanowar Elves) pays like a land
            creatures.append(make_creature(defs, card.name, card.id, card.power, card.toughness,
                                           card.tapped, card.sick, in_combat))
    hand = tuple(defs.get(c.name) or UNKNOWN for c in player.hand)
    size = player.handCount if player.handCount is not None else len(player.hand)
    return Side(player.id, player.name, player.life, hand, size, tuple(player.battlefield), tuple(creatures),
                lands, untapped)


def _find_me(request: ForgeRequest) -> int:
    players = request.state.players
    name = request.context.playerName
    if name:
        for i, p in enumerate(players):
            if p.name == name:
                return i
    if request.request_type == "declare_blockers" and request.state.activePlayerId is not None:
        for i, p in enumerate(players):
            if p.id is not None and p.id != request.state.activePlayerId:
                return i
    prio = request.state.priorityPlayerId
    if prio is not None:
        for i, p in enumerate(players):
            if p.id == prio:
                return i
    for i, p in enumerate(players):
        if not p.hand_hidden and p.hand:
            return i
    return 0


_NOBODY = PlayerState(name="opponent")


def build_view(request: ForgeRequest) -> View:
    defs = _definitions(request)
    players = request.state.players or [PlayerState(name=request.context.playerName or "me")]
    mine = _find_me(request)
    me = players[mine]
    others = [p for i, p in enumerate(players) if i != mine]
    # Multiplayer: the opponent with the lowest life is the one worth pressing.
    opp = min(others, key=lambda p: p.life) if others else _NOBODY
    active = request.state.activePlayerId
    if active is not None and me.id is not None:
        my_turn = active == me.id
    else:
        my_turn = request.request_type != "declare_blockers"  # we block only on the opponent's turn
    phase = request.state.phase or request.context.phase
    turn = request.state.turn or (request.context.turn or 0)
    fighting = combat_ids(request.state.combat)
    return View(_side(me, defs, fighting), _side(opp, defs, fighting), my_turn, phase, turn,
                tuple(request.state.stack), defs)
