"""Hand-built requests for every decision shape Forge sends, in both dialects.

:class:`Table` builds a board from card names (ids assigned, definitions filled in from
:mod:`cards`), and turns it into ``action``/``possible_actions``, ``target``, ``declare_attackers``
and ``declare_blockers`` requests. :func:`catalogue` lists named situations covering whole turns:
land drops, casting by value, removal and its targets, counters with a spell on the stack, combat
pumps, activated abilities, safe, lethal and held-back attacks, blocks that eat, trade, wall and
chump, evasion, multi-target and optional targets, and the client variations (ids as strings,
hands as bare names, a hidden hand as "Unknown").
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from agent.games.forge.fake.cards import CARDS, LAND_COLOUR, definitions

ME, OPP = "Agent", "Opponent"


@dataclass
class Table:
    turn: int = 5
    phase: str = "MAIN1"
    my_turn: bool = True
    my_life: int = 20
    opp_life: int = 20
    hand_as_names: bool = False
    hidden_hand: Any = field(default_factory=list)
    string_ids: bool = False
    _ids: Any = field(default_factory=lambda: itertools.count(200))
    mine_bf: list[dict[str, Any]] = field(default_factory=list)
    theirs_bf: list[dict[str, Any]] = field(default_factory=list)
    my_hand: list[dict[str, Any]] = field(default_factory=list)
    stack_items: list[dict[str, Any]] = field(default_factory=list)

    def _id(self) -> Any:
        n = next(self._ids)
        return str(n) if self.string_ids else n

    def _perm(self, name: str, tapped: bool, sick: bool) -> dict[str, Any]:
        card = CARDS[name]
        d: dict[str, Any] = {"name": name, "id": self._id(), "zone": "Battlefield", "tapped": tapped}
        if card.power is not None:
            d.update(power=card.power, toughness=card.toughness, sick=sick)
        return d

    def mine(self, *names: str, tapped: bool = False, sick: bool = False) -> list[Any]:
        items = [self._perm(n, tapped, sick) for n in names]
        self.mine_bf += items
        return [i["id"] for i in items]

    def theirs(self, *names: str, tapped: bool = False) -> list[Any]:
        items = [self._perm(n, tapped, False) for n in names]
        self.theirs_bf += items
        return [i["id"] for i in items]

    def hand(self, *names: str) -> list[Any]:
        items = [{"name": n, "id": self._id(), "zone": "Hand"} for n in names]
        self.my_hand += items
        return [i["id"] for i in items]

    def stack(self, name: str, controller: str = OPP) -> Any:
        item = {"card_name": name, "card_id": self._id(), "description": CARDS[name].oracle_text,
                "controller": controller}
        self.stack_items.insert(0, item)
        return item["card_id"]

    def lands(self, n: int, name: str = "Mountain", tapped: bool = False) -> None:
        self.mine(*([name] * n), tapped=tapped)

    # ---- request pieces ----------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        names = {c["name"] for c in self.mine_bf + self.theirs_bf + self.my_hand} | {
            s["card_name"] for s in self.stack_items}
        hand: list[Any] = [c["name"] for c in self.my_hand] if self.hand_as_names else list(self.my_hand)
        me_id, opp_id = ("1", "2") if self.string_ids else (1, 2)
        return {
            "turn": self.turn, "phase": self.phase, "activePlayerId": me_id if self.my_turn else opp_id,
            "priorityPlayerId": me_id, "stack": self.stack_items, "stack_size": len(self.stack_items),
            "players": [
                {"id": me_id, "name": ME, "life": self.my_life, "libraryCount": 30, "hand": hand,
                 "graveyard": [], "battlefield": self.mine_bf, "exile": []},
                {"id": opp_id, "name": OPP, "life": self.opp_life, "libraryCount": 30, "hand": self.hidden_hand,
                 "handCount": 4,
                 "graveyard": [], "battlefield": self.theirs_bf, "exile": []},
            ],
            "card_definitions": definitions(names),
        }

    def _request(self, kind: str, action_state: dict[str, Any], **context: Any) -> dict[str, Any]:
        return {"gameId": "catalogue", "requestType": kind, "gameState": self.state(), "actionState": action_state,
                "context": {"requestType": kind, "phase": self.phase, "turn": self.turn, "playerName": ME, **context}}

    def offered_actions(self) -> list[dict[str, Any]]:
        """What Forge would offer: land drops in a main phase, spells the untapped lands pay for."""
        untapped = sum(1 for c in self.mine_bf if c["name"] in LAND_COLOUR and not c["tapped"])
        sorcery = self.my_turn and "MAIN" in self.phase and not self.stack_items
        out: list[dict[str, Any]] = []
        for c in self.my_hand:
            card = CARDS[c["name"]]
            if c["name"] in LAND_COLOUR:
                if sorcery:
                    out.append({"type": "play_land", "card_id": c["id"], "card_name": c["name"]})
                continue
            cost = sum(int(s) if s.isdigit() else 1 for s in card.mana_cost.strip("{}").split("}{") if s)
            if cost <= untapped and (sorcery or card.type == "Instant"):
                out.append({"type": "cast_spell", "card_id": c["id"], "card_name": c["name"],
                            "mana_cost": card.mana_cost, "requires_targets": bool(card.targets)})
        for c in self.mine_bf:
            card = CARDS[c["name"]]
            if card.effect in ("tap_ping", "mana") and not c["tapped"] and not c.get("sick"):
                out.append({"type": "activate_ability", "card_id": c["id"], "card_name": c["name"],
                            "ability_description": card.oracle_text, "mana_cost": "{T}",
                            "requires_targets": card.effect == "tap_ping"})
        out.append({"type": "pass_priority", "ability_description": "Pass priority"})
        return out

    def actions(self, dialect: str = "action", options: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        options = options if options is not None else self.offered_actions()
        if dialect == "action":
            return self._request("action", {"actions": options, "count": len(options)})
        spec = [{"index": i, "type": o["type"], "card": o.get("card_name"), "card_id": o.get("card_id"),
                 **{k: v for k, v in o.items() if k not in ("type", "card_name", "card_id")}}
                for i, o in enumerate(options)]
        return self._request("possible_actions", {"possible_actions": spec})

    def target(self, spell: str, kinds: str = "any", low: int = 1, high: int = 1) -> dict[str, Any]:
        targets: list[dict[str, Any]] = []
        if kinds in ("any", "player"):
            targets += [{"type": "Player", "name": ME, "id": 1, "life": self.my_life},
                        {"type": "Player", "name": OPP, "id": 2, "life": self.opp_life}]
        if kinds in ("any", "creature"):
            targets += [{"type": "Card", "name": c["name"], "id": c["id"]}
                        for c in self.mine_bf + self.theirs_bf if CARDS[c["name"]].power is not None]
        if kinds == "spell":
            targets += [{"type": "Spell", "name": s["card_name"], "id": s["card_id"]} for s in self.stack_items]
        targets = [{"index": i, **t} for i, t in enumerate(targets)]
        return self._request("target", {"title": f"Choose targets for {spell}", "min": low, "max": high,
                                        "targets": targets},
                             spellName=spell, spellDescription=CARDS[spell].oracle_text)

    def attack(self) -> dict[str, Any]:
        able = [c for c in self.mine_bf if CARDS[c["name"]].power is not None and not c["tapped"] and not c.get("sick")]
        return self._request("declare_attackers", {
            "attackers": [{"index": i, "id": c["id"], "name": c["name"], "power": c["power"],
                           "toughness": c["toughness"]} for i, c in enumerate(able)],
            "defenders": [{"index": 0, "id": 2, "name": OPP, "type": "Player"}]})

    def block(self, attacker_ids: list[Any]) -> dict[str, Any]:
        attackers = [c for c in self.theirs_bf if c["id"] in attacker_ids]
        able = [c for c in self.mine_bf if CARDS[c["name"]].power is not None and not c["tapped"]]
        return self._request("declare_blockers", {
            "attackers": [{"index": i, "id": c["id"], "name": c["name"], "attacking": ME}
                          for i, c in enumerate(attackers)],
            "blockers": [{"index": i, "id": c["id"], "name": c["name"], "power": c["power"],
                          "toughness": c["toughness"]} for i, c in enumerate(able)]})


def catalogue(dialect: str = "action") -> list[tuple[str, dict[str, Any]]]:
    """(name, request) for every situation; main decisions in ``dialect``, the rest shared."""
    out: list[tuple[str, dict[str, Any]]] = []

    t = Table(turn=1)
    t.hand("Mountain", "Forest", "Grizzly Bears", "Lightning Bolt")
    out.append(("turn 1: land drop", t.actions(dialect)))

    t = Table(turn=3)
    t.lands(1, "Mountain")
    t.lands(1, "Forest")
    t.hand("Forest", "Grizzly Bears", "Centaur Courser", "Giant Growth")
    out.append(("turn 3: land before spells", t.actions(dialect)))

    t = Table(turn=3)
    t.lands(2, "Forest")
    t.lands(1, "Mountain")
    t.hand("Grizzly Bears", "Centaur Courser", "Giant Growth")
    out.append(("main 1: cast the best creature", t.actions(dialect)))

    t = Table(turn=4)
    t.lands(2, "Swamp")
    t.theirs("Serra Angel")
    t.hand("Doom Blade", "Typhoid Rats")
    out.append(("main 1: removal on a big flier", t.actions(dialect)))
    out.append(("target: Doom Blade", t.target("Doom Blade", "creature")))

    t = Table(turn=6, opp_life=3)
    t.lands(1, "Mountain")
    t.theirs("Grizzly Bears")
    t.hand("Lightning Bolt")
    out.append(("main 1: burn for lethal", t.actions(dialect)))
    out.append(("target: lethal Bolt", t.target("Lightning Bolt")))

    t = Table(turn=5)
    t.lands(1, "Mountain")
    t.theirs("Savannah Lions", "Serra Angel")
    out.append(("target: Bolt kills what it can", t.target("Lightning Bolt")))

    t = Table(turn=5, my_turn=False, phase="MAIN1")
    t.lands(2, "Island")
    t.hand("Counterspell")
    t.stack("Air Elemental")
    out.append(("opponent's spell on the stack: counter it", t.actions(dialect)))
    out.append(("target: the spell to counter", t.target("Counterspell", "spell")))

    t = Table(turn=5, my_turn=False, phase="MAIN1")
    t.lands(1, "Mountain")
    t.hand("Lightning Bolt", "Hill Giant")
    t.mine("Grizzly Bears")
    out.append(("opponent's main phase, nothing to answer: pass", t.actions(dialect)))

    t = Table(turn=7, phase="COMBAT_DECLARE_BLOCKERS")
    t.lands(1, "Forest")
    t.mine("Grizzly Bears", tapped=True)
    t.theirs("Centaur Courser")
    t.hand("Giant Growth")
    out.append(("combat: pump the attacker", t.actions(dialect)))
    out.append(("target: Giant Growth on our creature", t.target("Giant Growth", "creature")))

    t = Table(turn=6)
    t.mine("Prodigal Sorcerer", "Llanowar Elves")
    t.lands(3, "Island")
    t.theirs("Llanowar Elves")
    out.append(("activated abilities: ping, not mana", t.actions(dialect)))
    out.append(("target: Prodigal Sorcerer's ping", t.target("Prodigal Sorcerer")))

    t = Table(turn=6)
    t.lands(1, "Mountain")
    t.theirs("Grizzly Bears", "Savannah Lions")
    out.append(("target: Forked Bolt, up to two", t.target("Forked Bolt", "any", 1, 2)))
    out.append(("target: optional (min 0)", t.target("Shock", "any", 0, 1)))
    out.append(("target: two required", t.target("Forked Bolt", "creature", 2, 2)))

    t = Table(turn=6, phase="COMBAT_DECLARE_ATTACKERS")
    t.mine("Grizzly Bears", "Serra Angel", "Centaur Courser")
    t.theirs("Hill Giant")
    out.append(("attack: safe attackers only", t.attack()))

    t = Table(turn=8, phase="COMBAT_DECLARE_ATTACKERS", opp_life=4)
    t.mine("Grizzly Bears", "Centaur Courser", "Goblin Guide")
    t.theirs("Wall of Omens")
    out.append(("attack: lethal through one blocker", t.attack()))

    t = Table(turn=8, phase="COMBAT_DECLARE_ATTACKERS", my_life=4)
    t.mine("Centaur Courser", "Grizzly Bears")
    t.theirs("Hill Giant", "Goblin Guide")
    out.append(("attack: hold back to survive", t.attack()))

    t = Table(turn=7, phase="COMBAT_DECLARE_BLOCKERS", my_turn=False)
    t.mine("Centaur Courser", "Wall of Omens", "Typhoid Rats")
    a = t.theirs("Grizzly Bears", "Hill Giant", "Air Elemental")
    out.append(("block: eat, trade, wall; fliers pass", t.block(a)))

    t = Table(turn=9, phase="COMBAT_DECLARE_BLOCKERS", my_turn=False, my_life=5)
    t.mine("Llanowar Elves", "Savannah Lions")
    a = t.theirs("Craw Wurm", "Hill Giant")
    out.append(("block: chump to survive", t.block(a)))

    t = Table(turn=9, phase="COMBAT_DECLARE_BLOCKERS", my_turn=False)
    t.mine("Giant Spider")
    a = t.theirs("Air Elemental")
    out.append(("block: reach could block the flier but would only die", t.block(a)))

    t = Table(turn=9, phase="COMBAT_DECLARE_BLOCKERS", my_turn=False)
    t.mine("Giant Spider")
    a = t.theirs("Vampire Nighthawk")
    out.append(("block: a deathtouch flier is not blocked for nothing", t.block(a)))

    t = Table(turn=4, string_ids=True, hand_as_names=True, hidden_hand="Unknown")
    t.lands(3, "Plains")
    t.hand("Plains", "Wall of Omens", "Savannah Lions")
    out.append(("variation: string ids, hand of names, hidden hand", t.actions(dialect)))

    t = Table(turn=10, phase="MAIN2")
    t.lands(4, "Plains")
    t.mine("Savannah Lions")
    t.theirs("Serra Angel", "Air Elemental", "Hill Giant")
    t.hand("Wrath of God")
    out.append(("main 2: Wrath a board that favours them", t.actions(dialect)))

    t = Table(turn=3, phase="MAIN2")
    t.lands(3, "Island")
    t.hand("Divination")
    out.append(("main 2: draw cards", t.actions(dialect)))

    t = Table(turn=9, phase="MAIN1")
    t.lands(6, "Mountain")
    t.mine("Shivan Dragon")
    out.append(("firebreathing is not spent in main 1", t.actions(dialect)))
    return out
