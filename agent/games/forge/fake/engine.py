"""A small two-player Magic game that asks the agent what Forge would ask, turn by turn.

It is not Forge's rules engine: it knows the cards in :mod:`cards` (lands, creatures with the
keywords they have, burn, removal, pump, auras, counters, card draw, two activated abilities) and
the turn structure (untap, draw, main 1, combat, main 2, end; the opponent's turn with its own
spells, attacks and the agent's blocks and instant-speed answers). The requests it sends have the
shapes FORGE_FACTS gives, in the dialect asked for, built from the real game state; each answer
is applied, so a whole game's requests depend on the agent's earlier decisions, as in Forge.

The agent is player 1 ("Agent"); player 2 is a simple built-in opponent that plays its lands,
its biggest spells, attacks with what is safe and blocks to kill.
"""

from __future__ import annotations

import random
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from agent.games.forge.fake.cards import CARDS, DECKS, LAND_COLOUR, Card, definitions

Ask = Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]]
"""Sends one request; returns Forge's reading of the answer (see checks.Verdict.decision), or
None when Forge's own AI decides instead (an error or fallback)."""

MAX_ACTIONS_PER_PHASE = 25
"""Forge would ask again after every action; a player that never passes is stopped here."""


@dataclass
class Perm:
    id: int
    name: str
    tapped: bool = False
    sick: bool = True
    damage: int = 0
    pump_p: int = 0
    pump_t: int = 0
    aura_p: int = 0
    pacified: bool = False
    trample: bool = False

    @property
    def card(self) -> Card:
        return CARDS[self.name]


@dataclass
class Player:
    id: int
    name: str
    library: list[str]
    life: int = 20
    hand: list[tuple[int, str]] = field(default_factory=list)
    graveyard: list[str] = field(default_factory=list)
    battlefield: list[Perm] = field(default_factory=list)
    land_played: bool = False


@dataclass
class StackEntry:
    id: int
    name: str
    controller: int
    targets: list[Any]
    countered: bool = False


@dataclass
class Stats:
    requests: dict[str, int] = field(default_factory=dict)
    fallbacks: int = 0
    loop_caps: int = 0


def _has(card: Card, word: str) -> bool:
    return bool(re.search(rf"(^|\n|, ){word}(\n|,|$)", card.oracle_text, re.IGNORECASE))


class Game:
    def __init__(self, seed: int, dialect: str = "action", agent_deck: str = "red-green",
                 opp_deck: str = "white-blue", game_id: str | None = None, max_turns: int = 24) -> None:
        if dialect not in ("action", "possible_actions"):
            raise ValueError(f"unknown dialect {dialect}")
        self.rng = random.Random(seed)
        self.dialect = dialect
        self.game_id = game_id or f"fake-{seed}-{dialect}"
        self.max_turns = max_turns
        self._next_id = 100
        decks = []
        for deck in (agent_deck, opp_deck):
            cards = list(DECKS[deck])
            self.rng.shuffle(cards)
            decks.append(cards)
        self.players = [Player(1, "Agent", decks[0]), Player(2, "Opponent", decks[1])]
        for p in self.players:
            for _ in range(7):
                self._draw(p)
        self.turn = 0
        self.active = 0
        self.phase = "MAIN1"
        self.stack: list[StackEntry] = []
        self.stats = Stats()
        self.winner: str | None = None
        self.ask: Ask | None = None
        self.attacking: list[Perm] = []
        self.blocks: dict[int, list[Perm]] = {}
        """Combat now: attackers and, per attacker id, its blockers (sent in every combat request)."""

    # ---- helpers ----------------------------------------------------------------------------

    def _id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _draw(self, p: Player) -> None:
        if not p.library:
            p.life = 0  # decking loses, as in Magic
            return
        p.hand.append((self._id(), p.library.pop()))

    @property
    def agent(self) -> Player:
        return self.players[0]

    @property
    def opp(self) -> Player:
        return self.players[1]

    def other(self, p: Player) -> Player:
        return self.players[1] if p is self.players[0] else self.players[0]

    def anthem(self, p: Player) -> int:
        return sum(1 for x in p.battlefield if x.name == "Glorious Anthem")

    def power(self, p: Player, x: Perm) -> int:
        return (x.card.power or 0) + x.pump_p + x.aura_p + self.anthem(p)

    def toughness(self, p: Player, x: Perm) -> int:
        return (x.card.toughness or 0) + x.pump_t + self.anthem(p)

    def creatures(self, p: Player) -> list[Perm]:
        return [x for x in p.battlefield if x.card.power is not None]

    def controller(self, perm_id: int) -> Player | None:
        return next((p for p in self.players if any(x.id == perm_id for x in p.battlefield)), None)

    def perm(self, perm_id: int) -> Perm | None:
        return next((x for p in self.players for x in p.battlefield if x.id == perm_id), None)

    def over(self) -> bool:
        if self.winner is None:
            for p in self.players:
                if p.life <= 0:
                    self.winner = self.other(p).name
        return self.winner is not None

    # ---- mana --------------------------------------------------------------------------------

    def sources(self, p: Player) -> list[tuple[Perm, str]]:
        out = []
        for x in p.battlefield:
            if x.tapped:
                continue
            if x.name in LAND_COLOUR:
                out.append((x, LAND_COLOUR[x.name]))
            elif x.card.effect == "mana" and not x.sick:
                out.append((x, "G"))
        return out

    def pay(self, p: Player, cost: str, commit: bool) -> bool:
        symbols = re.findall(r"\{([^}]*)\}", cost)
        coloured = [s for s in symbols if s in "WUBRG"]
        generic = sum(int(s) for s in symbols if s.isdigit())
        free = self.sources(p)
        used: list[Perm] = []
        for c in coloured:
            hit = next((src for src in free if src[1] == c), None)
            if hit is None:
                return False
            free.remove(hit)
            used.append(hit[0])
        if generic > len(free):
            return False
        used += [src[0] for src in free[:generic]]
        if commit:
            for x in used:
                x.tapped = True
        return True

    # ---- what the agent may do ---------------------------------------------------------------

    def legal_targets(self, kind: str, p: Player) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if kind in ("any", "any2", "player"):
            out += [{"type": "Player", "name": q.name, "id": q.id, "life": q.life} for q in self.players]
        if kind in ("any", "any2", "creature", "own_creature"):
            owners = [p] if kind == "own_creature" else self.players
            out += [{"type": "Card", "name": x.name, "id": x.id, "controller": q.name}
                    for q in owners for x in self.creatures(q)]
        if kind == "spell":
            out += [{"type": "Spell", "name": s.name, "id": s.id, "controller": self.players[s.controller].name}
                    for s in self.stack]
        return [{"index": i, **t} for i, t in enumerate(out)]

    def options(self, p: Player) -> list[dict[str, Any]]:
        sorcery = self.players[self.active] is p and self.phase in ("MAIN1", "MAIN2") and not self.stack
        out: list[dict[str, Any]] = []
        for hid, name in p.hand:
            card = CARDS[name]
            if card.type.startswith("Basic Land"):
                if sorcery and not p.land_played:
                    out.append({"type": "play_land", "card_id": hid, "card_name": name})
                continue
            instant = card.type == "Instant"
            if not (instant or sorcery) or not self.pay(p, card.mana_cost, commit=False):
                continue
            if card.targets and not self.legal_targets(card.targets, p):
                continue
            out.append({"type": "cast_spell", "card_id": hid, "card_name": name, "mana_cost": card.mana_cost,
                        "requires_targets": bool(card.targets), **self._target_counts(card)})
        for x in p.battlefield:
            card = x.card
            if card.effect == "tap_ping" and not x.tapped and not x.sick:
                out.append({"type": "activate_ability", "card_id": x.id, "card_name": x.name,
                            "ability_description": card.oracle_text, "mana_cost": "{T}", "requires_targets": True,
                            "target_min": 1, "target_max": 1, "target_zone": "Battlefield,Player"})
            elif card.effect == "firebreathing" and self.pay(p, "{R}", commit=False):
                out.append({"type": "activate_ability", "card_id": x.id, "card_name": x.name,
                            "ability_description": card.oracle_text.split("\n")[-1], "mana_cost": "{R}",
                            "requires_targets": False})
            elif card.effect == "mana" and not x.tapped and not x.sick:
                out.append({"type": "activate_ability", "card_id": x.id, "card_name": x.name,
                            "ability_description": card.oracle_text, "mana_cost": "{T}", "requires_targets": False})
        out.append({"type": "pass_priority", "card_name": "", "ability_description": "Pass priority"})
        return out

    @staticmethod
    def _target_counts(card: Card) -> dict[str, Any]:
        if not card.targets:
            return {}
        high = 2 if card.targets == "any2" else 1
        zone = {"spell": "Stack", "player": "Player"}.get(card.targets, "Battlefield,Player")
        return {"target_min": 1, "target_max": high, "target_zone": zone}

    # ---- requests ----------------------------------------------------------------------------

    def _card_json(self, p: Player, x: Perm) -> dict[str, Any]:
        d: dict[str, Any] = {"name": x.name, "id": x.id, "zone": "Battlefield", "tapped": x.tapped}
        if x.card.power is not None:
            d.update(power=self.power(p, x), toughness=self.toughness(p, x), sick=x.sick)
            if x in self.attacking:
                d["attacking"] = True
            if any(x in bs for bs in self.blocks.values()):
                d["blocking"] = True
        return d

    def combat_json(self) -> dict[str, Any] | None:
        if not self.attacking:
            return None
        defender = self.other(self.players[self.active]).name
        return {"attackers": [{"id": a.id, "name": a.name, "defender": defender,
                               "blockers": [{"id": b.id, "name": b.name} for b in self.blocks.get(a.id, [])]}
                              for a in self.attacking]}

    def state_json(self, to: Player, combat: dict[str, Any] | None = None) -> dict[str, Any]:
        names: set[str] = set()
        players = []
        for q in self.players:
            visible = q is to
            names.update(x.name for x in q.battlefield)
            names.update(q.graveyard)
            if visible:
                names.update(n for _, n in q.hand)
            hand: Any
            if visible:
                hand = [{"name": n, "id": i, "zone": "Hand"} for i, n in q.hand]
            else:
                hand = "Unknown" if self.dialect == "possible_actions" else []
            players.append({"id": q.id, "name": q.name, "life": q.life, "libraryCount": len(q.library),
                            "hand": hand, "handCount": len(q.hand), "graveyard": list(q.graveyard),
                            "battlefield": [self._card_json(q, x) for x in q.battlefield], "exile": []})
        names.update(s.name for s in self.stack)
        state: dict[str, Any] = {
            "turn": self.turn, "phase": self.phase, "activePlayerId": self.players[self.active].id,
            "priorityPlayerId": to.id,
            "stack": [{"card_name": s.name, "card_id": s.id, "description": CARDS[s.name].oracle_text,
                       "controller": self.players[s.controller].name} for s in reversed(self.stack)],
            "stack_size": len(self.stack), "players": players, "card_definitions": definitions(names),
        }
        combat = combat if combat is not None else self.combat_json()
        if combat is not None:
            state["combat"] = combat
        return state

    def request(self, kind: str, to: Player, action_state: dict[str, Any], combat: dict[str, Any] | None = None,
                **context: Any) -> dict[str, Any]:
        self.stats.requests[kind] = self.stats.requests.get(kind, 0) + 1
        return {"gameId": self.game_id, "requestType": kind, "gameState": self.state_json(to, combat),
                "actionState": action_state,
                "context": {"requestType": kind, "phase": self.phase, "turn": self.turn, "playerName": to.name,
                            **context}}

    def action_request(self, p: Player, options: list[dict[str, Any]]) -> dict[str, Any]:
        if self.dialect == "action":
            return self.request("action", p, {"actions": options, "count": len(options)})
        spec = [{"index": i, "type": o["type"], "card": o.get("card_name") or None, "card_id": o.get("card_id"),
                 **{k: v for k, v in o.items() if k not in ("type", "card_name", "card_id")}}
                for i, o in enumerate(options)]
        return self.request("possible_actions", p, {"possible_actions": spec})

    async def _ask(self, request: dict[str, Any]) -> dict[str, Any] | None:
        assert self.ask is not None
        answer = await self.ask(request)
        if answer is None:
            self.stats.fallbacks += 1
        return answer

    # ---- priority, casting, resolving ----------------------------------------------------------

    async def agent_priority(self) -> None:
        """The agent acts until it passes (Forge does not ask when passing is the only option)."""
        for _ in range(MAX_ACTIONS_PER_PHASE):
            if self.over():
                return
            options = self.options(self.agent)
            if len(options) == 1:
                return
            answer = await self._ask(self.action_request(self.agent, options))
            if answer is None or answer.get("pass"):
                return
            await self.take(self.agent, options[answer["index"]])
        self.stats.loop_caps += 1

    async def take(self, p: Player, option: dict[str, Any]) -> None:
        kind = option["type"]
        if kind == "play_land":
            self._play_land(p, option["card_id"])
            return
        if kind == "activate_ability":
            x = self.perm(option["card_id"])
            if x is None:
                return
            if x.card.effect == "tap_ping":
                x.tapped = True
                targets = await self.choose_targets(p, x.card, x.card.oracle_text)
                for t in targets:
                    self._damage_target(t, 1, p)
            elif x.card.effect == "firebreathing":
                self.pay(p, "{R}", commit=True)
                x.pump_p += 1
            elif x.card.effect == "mana":
                x.tapped = True  # the mana empties from the pool: a wasted activation
            return
        await self.cast(p, option["card_id"])

    def _play_land(self, p: Player, hid: int) -> None:
        name = next(n for i, n in p.hand if i == hid)
        p.hand = [(i, n) for i, n in p.hand if i != hid]
        p.battlefield.append(Perm(self._id(), name, sick=False))
        p.land_played = True

    async def cast(self, p: Player, hid: int) -> None:
        name = next(n for i, n in p.hand if i == hid)
        card = CARDS[name]
        if not self.pay(p, card.mana_cost, commit=True):
            return
        p.hand = [(i, n) for i, n in p.hand if i != hid]
        targets = await self.choose_targets(p, card, card.oracle_text) if card.targets else []
        entry = StackEntry(self._id(), name, self.players.index(p), targets)
        self.stack.append(entry)
        # The other player may answer with an instant (the agent is asked; the opponent decides itself).
        if p is self.opp:
            await self.agent_priority()
        else:
            self.opp_respond(entry)
        while self.stack and not self.over():
            self.resolve(self.stack.pop())

    async def choose_targets(self, p: Player, card: Card, text: str) -> list[Any]:
        kind = "any" if card.effect == "tap_ping" else card.targets
        legal = self.legal_targets(kind, p)
        high = 2 if kind == "any2" else 1
        if p is self.opp:
            return [self.opp_pick_target(card, legal)]
        answer = await self._ask(self.request(
            "target", p, {"title": f"Choose targets for {card.name}", "min": 1, "max": high, "targets": legal},
            spellName=card.name, spellDescription=text))
        chosen = answer["indices"] if answer else [legal[0]["index"]]  # Forge's AI: the first legal target
        return [legal[i] for i in chosen]

    def opp_pick_target(self, card: Card, legal: list[dict[str, Any]]) -> dict[str, Any]:
        if card.effect.startswith(("pump", "aura", "gain")):
            own = [t for t in legal if t.get("controller", t["name"]) == self.opp.name]
            return own[0] if own else legal[0]
        theirs = [t for t in legal if t["type"] != "Player" and t.get("controller") == self.agent.name]
        if theirs:
            return max(theirs, key=lambda t: (CARDS[t["name"]].power or 0))
        face = [t for t in legal if t["type"] == "Player" and t["name"] == self.agent.name]
        return face[0] if face else legal[0]

    def opp_respond(self, entry: StackEntry) -> None:
        """The opponent counters the agent's spells of mana value 3 or more when it can."""
        card = CARDS[entry.name]
        value = sum(int(s) if s.isdigit() else 1 for s in re.findall(r"\{([^}]*)\}", card.mana_cost))
        for hid, name in self.opp.hand:
            if name == "Counterspell" and value >= 3 and self.pay(self.opp, CARDS[name].mana_cost, commit=True):
                self.opp.hand = [(i, n) for i, n in self.opp.hand if i != hid]
                self.opp.graveyard.append(name)
                entry.countered = True
                return

    def resolve(self, entry: StackEntry) -> None:
        p = self.players[entry.controller]
        card = CARDS[entry.name]
        if entry.countered:
            p.graveyard.append(entry.name)
            return
        effect, _, arg = card.effect.partition(":")
        if card.power is not None:
            perm = Perm(self._id(), card.name, sick=not _has(card, "Haste"))
            p.battlefield.append(perm)
            if effect == "etb_draw":
                for _ in range(int(arg)):
                    self._draw(p)
            return
        if effect == "damage":
            for t in entry.targets:
                self._damage_target(t, int(arg) if card.targets != "any2" or len(entry.targets) > 1 else 2, p)
        elif effect == "destroy":
            for t in entry.targets:
                self._destroy(t.get("id"))
        elif effect == "pump":
            pp, tt = (int(v) for v in arg.split("/"))
            for t in entry.targets:
                x = self.perm(t.get("id"))
                if x is not None:
                    x.pump_p += pp
                    x.pump_t += tt
        elif effect == "aura" or effect == "pacify":
            x = self.perm(entry.targets[0].get("id")) if entry.targets else None
            if x is not None:
                if effect == "aura":
                    x.aura_p += 2
                    x.trample = True
                else:
                    x.pacified = True
            p.battlefield.append(Perm(self._id(), card.name, sick=False))
            return
        elif effect == "anthem":
            p.battlefield.append(Perm(self._id(), card.name, sick=False))
            return
        elif effect == "draw":
            for _ in range(int(arg)):
                self._draw(p)
        elif effect == "gain":
            for t in entry.targets:
                q = next((q for q in self.players if q.id == t.get("id") and t["type"] == "Player"), None)
                if q is not None:
                    q.life += int(arg)
        elif effect == "discard":
            for t in entry.targets:
                q = next((q for q in self.players if q.id == t.get("id")), None)
                if q is not None:
                    del q.hand[: int(arg)]
        elif effect == "counter":
            for t in entry.targets:
                hit = next((s for s in self.stack if s.id == t.get("id")), None)
                if hit is not None:
                    hit.countered = True
        elif effect == "wrath":
            for q in self.players:
                for x in list(self.creatures(q)):
                    self._destroy(x.id)
        p.graveyard.append(card.name)

    def _damage_target(self, target: dict[str, Any], amount: int, source: Player) -> None:
        if target["type"] == "Player":
            q = next((q for q in self.players if q.id == target["id"]), None)
            if q is not None:
                q.life -= amount
            return
        x = self.perm(target["id"])
        if x is not None:
            x.damage += amount
            self._check_deaths()

    def _destroy(self, perm_id: Any) -> None:
        q = self.controller(perm_id) if perm_id is not None else None
        if q is None:
            return
        x = next(x for x in q.battlefield if x.id == perm_id)
        q.battlefield.remove(x)
        q.graveyard.append(x.name)
        if x.aura_p or x.pacified:  # auras go with it; Rancor returns to its owner's hand
            for name in ("Rancor", "Pacifism"):
                aura = next((a for a in q.battlefield if a.name == name), None)
                if aura is not None and ((name == "Rancor" and x.aura_p) or (name == "Pacifism" and x.pacified)):
                    q.battlefield.remove(aura)
                    if name == "Rancor":
                        q.hand.append((self._id(), "Rancor"))
                    else:
                        q.graveyard.append(name)

    def _check_deaths(self) -> None:
        for q in self.players:
            for x in list(self.creatures(q)):
                if x.damage >= self.toughness(q, x) > 0 or self.toughness(q, x) <= 0:
                    self._destroy(x.id)

    # ---- combat --------------------------------------------------------------------------------

    def can_attack(self, p: Player, x: Perm) -> bool:
        c = x.card
        return (c.power is not None and not x.tapped and not x.pacified and not _has(c, "Defender")
                and (not x.sick or _has(c, "Haste")))

    def can_block(self, blocker: Perm, attacker: Perm) -> bool:
        if blocker.tapped or blocker.pacified:
            return False
        flier = _has(attacker.card, "Flying")
        return not (flier and not (_has(blocker.card, "Flying") or _has(blocker.card, "Reach")))

    async def agent_attacks(self) -> list[Perm]:
        able = [x for x in self.creatures(self.agent) if self.can_attack(self.agent, x)]
        if not able:
            return []
        self.phase = "COMBAT_DECLARE_ATTACKERS"
        state = {"attackers": [{"index": i, "id": x.id, "name": x.name, "power": self.power(self.agent, x),
                                "toughness": self.toughness(self.agent, x)} for i, x in enumerate(able)],
                 "defenders": [{"index": 0, "id": self.opp.id, "name": self.opp.name, "type": "Player"}]}
        answer = await self._ask(self.request("declare_attackers", self.agent, state))
        pairs = answer["pairs"] if answer else []
        return [able[a] for a, _ in pairs]

    def opp_blocks(self, attackers: list[Perm]) -> dict[int, Perm]:
        blocks: dict[int, Perm] = {}
        free = [x for x in self.creatures(self.opp) if not x.tapped and not x.pacified]
        incoming = sum(self.power(self.agent, a) for a in attackers)
        for a in sorted(attackers, key=lambda a: -self.power(self.agent, a)):
            ap, at = self.power(self.agent, a), self.toughness(self.agent, a)
            good = [b for b in free if self.can_block(b, a) and self.power(self.opp, b) >= at
                    and self.toughness(self.opp, b) > ap]
            chump = [b for b in free if self.can_block(b, a)] if incoming >= self.opp.life else []
            candidates = good or chump
            if candidates:
                pick = candidates[0]
                blocks[a.id] = pick
                free.remove(pick)
                incoming -= ap
        return blocks

    def opp_attackers(self) -> list[Perm]:
        out = []
        defenders = [x for x in self.creatures(self.agent) if not x.tapped and not x.pacified]
        for x in self.creatures(self.opp):
            if not self.can_attack(self.opp, x) or self.power(self.opp, x) <= 0:
                continue
            eaten = any(self.can_block(b, x) and self.power(self.agent, b) >= self.toughness(self.opp, x)
                        and self.toughness(self.agent, b) > self.power(self.opp, x) for b in defenders)
            if not eaten or self.rng.random() < 0.2:
                out.append(x)
        return out

    async def agent_blocks(self, attackers: list[Perm]) -> dict[int, list[Perm]]:
        able = [x for x in self.creatures(self.agent) if not x.tapped and not x.pacified]
        if not able or not attackers:
            return {}
        state = {"attackers": [{"index": i, "id": a.id, "name": a.name, "attacking": self.agent.name}
                               for i, a in enumerate(attackers)],
                 "blockers": [{"index": i, "id": b.id, "name": b.name, "power": self.power(self.agent, b),
                               "toughness": self.toughness(self.agent, b)} for i, b in enumerate(able)]}
        answer = await self._ask(self.request("declare_blockers", self.agent, state))
        blocks: dict[int, list[Perm]] = {}
        for b, a in (answer["pairs"] if answer else []):
            blocker, attacker = able[b], attackers[a]
            if self.can_block(blocker, attacker):  # Forge's rules would refuse an illegal block
                blocks.setdefault(attacker.id, []).append(blocker)
        return blocks

    def damage(self, att: Player, attackers: list[Perm], blocks: dict[int, list[Perm]]) -> None:
        dfn = self.other(att)
        for a in attackers:
            if a not in att.battlefield:
                continue
            ap = self.power(att, a)
            blockers = [b for b in blocks.get(a.id, []) if b in dfn.battlefield]
            if not blockers:
                dfn.life -= ap
                if _has(a.card, "Lifelink"):
                    att.life += ap
                continue
            left = ap
            for b in blockers:
                need = 1 if _has(a.card, "Deathtouch") else max(0, self.toughness(dfn, b) - b.damage)
                dealt = min(left, need)
                b.damage += 10**3 if _has(a.card, "Deathtouch") and dealt > 0 else dealt
                left -= dealt
                bp = self.power(dfn, b)
                a.damage += 10**3 if _has(b.card, "Deathtouch") and bp > 0 else bp
            if a.trample and left > 0:
                dfn.life -= left
            if _has(a.card, "Lifelink"):
                att.life += ap
        self._check_deaths()

    # ---- turns -------------------------------------------------------------------------------

    def _start_turn(self, p: Player) -> None:
        self.turn += 1
        self.active = self.players.index(p)
        p.land_played = False
        for x in p.battlefield:
            x.tapped = False
            x.sick = False
        if self.turn > 1:
            self._draw(p)

    def _end_turn(self) -> None:
        for q in self.players:
            for x in q.battlefield:
                x.damage = x.pump_p = x.pump_t = 0
            del q.hand[7:]

    async def agent_turn(self) -> None:
        self._start_turn(self.agent)
        self.phase = "MAIN1"
        await self.agent_priority()
        if self.over():
            return
        attackers = await self.agent_attacks()
        if attackers:
            for a in attackers:
                if not _has(a.card, "Vigilance"):
                    a.tapped = True
            blocks = {k: [v] for k, v in self.opp_blocks(attackers).items()}
            self.attacking, self.blocks = attackers, blocks
            self.phase = "COMBAT_DECLARE_BLOCKERS"
            await self.agent_priority()  # pump or removal before damage
            self.phase = "COMBAT_DAMAGE"
            self.damage(self.agent, attackers, blocks)
            self.attacking, self.blocks = [], {}
        if self.over():
            return
        self.phase = "MAIN2"
        await self.agent_priority()
        self._end_turn()

    async def opp_turn(self) -> None:
        p = self.opp
        self._start_turn(p)
        self.phase = "MAIN1"
        land = next(((i, n) for i, n in p.hand if n in LAND_COLOUR), None)
        if land is not None:
            self._play_land(p, land[0])
        for _ in range(4):
            castable = [(i, n) for i, n in p.hand if n not in LAND_COLOUR and CARDS[n].type != "Instant"
                        and self.pay(p, CARDS[n].mana_cost, commit=False)
                        and (not CARDS[n].targets or self.legal_targets(CARDS[n].targets, p))]
            if not castable or self.over():
                break
            hid, _ = max(castable, key=lambda c: len(CARDS[c[1]].mana_cost))
            await self.cast(p, hid)
        if self.over():
            return
        self.phase = "COMBAT_DECLARE_ATTACKERS"
        attackers = self.opp_attackers()
        if attackers:
            for a in attackers:
                if not _has(a.card, "Vigilance"):
                    a.tapped = True
            self.phase = "COMBAT_DECLARE_BLOCKERS"
            self.attacking = attackers
            blocks = await self.agent_blocks(attackers)
            self.blocks = blocks
            await self.agent_priority()
            self.phase = "COMBAT_DAMAGE"
            self.damage(p, attackers, blocks)
            self.attacking, self.blocks = [], {}
        if self.over():
            return
        self.phase = "END_OF_TURN"
        await self.agent_priority()  # instants at the end of the opponent's turn
        self._end_turn()

    async def play(self, ask: Ask) -> str:
        """Plays to the end (or ``max_turns``); returns the winner's name or 'draw'."""
        self.ask = ask
        agent_first = self.rng.random() < 0.5
        while not self.over() and self.turn < self.max_turns:
            if agent_first:
                await self.agent_turn()
                if not self.over():
                    await self.opp_turn()
            else:
                await self.opp_turn()
                if not self.over():
                    await self.agent_turn()
        return self.winner or "draw"

    def reflect_request(self) -> dict[str, Any]:
        req = self.request("reflect", self.agent, {})
        req["context"]["result"] = {"winner": self.winner or "draw", "turns": self.turn}
        return req
