"""Real Magic cards, written from their public card facts (name, cost, type line, P/T, oracle text).

Costs are in the ``{2}{R}`` form Forge puts in ``card_definitions``. ``effect`` tells the fake
engine how to resolve the card; the agent never sees it (it reads only the oracle text).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Card:
    name: str
    mana_cost: str
    type: str
    oracle_text: str
    power: int | None = None
    toughness: int | None = None
    effect: str = ""
    """How the fake engine resolves it: damage:N, destroy, draw:N, pump:P/T, gain:N, counter,
    wrath, aura:P/T, tap_ping:N (activated), firebreathing (activated), mana (activated)."""
    targets: str = ""
    """What it targets: any, creature, player, spell, own_creature, or '' for none."""

    def definition(self) -> dict[str, object]:
        d: dict[str, object] = {"name": self.name, "mana_cost": self.mana_cost, "type": self.type,
                                "oracle_text": self.oracle_text}
        if self.power is not None:
            d["power"] = str(self.power)
            d["toughness"] = str(self.toughness)
        return d


CARDS: dict[str, Card] = {c.name: c for c in (
    Card("Plains", "", "Basic Land — Plains", "({T}: Add {W}.)"),
    Card("Island", "", "Basic Land — Island", "({T}: Add {U}.)"),
    Card("Swamp", "", "Basic Land — Swamp", "({T}: Add {B}.)"),
    Card("Mountain", "", "Basic Land — Mountain", "({T}: Add {R}.)"),
    Card("Forest", "", "Basic Land — Forest", "({T}: Add {G}.)"),
    Card("Llanowar Elves", "{G}", "Creature — Elf Druid", "{T}: Add {G}.", 1, 1, effect="mana"),
    Card("Grizzly Bears", "{1}{G}", "Creature — Bear", "", 2, 2),
    Card("Centaur Courser", "{2}{G}", "Creature — Centaur Warrior", "", 3, 3),
    Card("Giant Spider", "{3}{G}", "Creature — Spider", "Reach", 2, 4),
    Card("Craw Wurm", "{4}{G}{G}", "Creature — Wurm", "", 6, 4),
    Card("Giant Growth", "{G}", "Instant", "Target creature gets +3/+3 until end of turn.",
         effect="pump:3/3", targets="creature"),
    Card("Rancor", "{G}", "Enchantment — Aura",
         "Enchant creature\nEnchanted creature gets +2/+0 and has trample.\nWhen Rancor is put into a "
         "graveyard from the battlefield, return Rancor to its owner's hand.",
         effect="aura:2/0", targets="own_creature"),
    Card("Savannah Lions", "{W}", "Creature — Cat", "", 2, 1),
    Card("Wall of Omens", "{1}{W}", "Creature — Wall",
         "Defender\nWhen Wall of Omens enters the battlefield, draw a card.", 0, 4, effect="etb_draw:1"),
    Card("Serra Angel", "{3}{W}{W}", "Creature — Angel", "Flying, vigilance", 4, 4),
    Card("Pacifism", "{1}{W}", "Enchantment — Aura",
         "Enchant creature\nEnchanted creature can't attack or block.", effect="pacify", targets="creature"),
    Card("Wrath of God", "{2}{W}{W}", "Sorcery", "Destroy all creatures. They can't be regenerated.", effect="wrath"),
    Card("Healing Salve", "{W}", "Instant",
         "Choose one —\n• Target player gains 3 life.\n• Prevent the next 3 damage that would be dealt to any "
         "target this turn.", effect="gain:3", targets="player"),
    Card("Counterspell", "{U}{U}", "Instant", "Counter target spell.", effect="counter", targets="spell"),
    Card("Divination", "{2}{U}", "Sorcery", "Draw two cards.", effect="draw:2"),
    Card("Air Elemental", "{3}{U}{U}", "Creature — Elemental", "Flying", 4, 4),
    Card("Prodigal Sorcerer", "{2}{U}", "Creature — Human Wizard",
         "{T}: Prodigal Sorcerer deals 1 damage to any target.",
         1, 1, effect="tap_ping", targets="any"),
    Card("Typhoid Rats", "{B}", "Creature — Rat", "Deathtouch", 1, 1),
    Card("Vampire Nighthawk", "{1}{B}{B}", "Creature — Vampire Shaman", "Flying\nDeathtouch\nLifelink", 2, 3),
    Card("Doom Blade", "{1}{B}", "Instant", "Destroy target nonblack creature.", effect="destroy", targets="creature"),
    Card("Murder", "{1}{B}{B}", "Instant", "Destroy target creature.", effect="destroy", targets="creature"),
    Card("Mind Rot", "{2}{B}", "Sorcery", "Target player discards two cards.", effect="discard:2", targets="player"),
    Card("Lightning Bolt", "{R}", "Instant", "Lightning Bolt deals 3 damage to any target.", effect="damage:3",
         targets="any"),
    Card("Shock", "{R}", "Instant", "Shock deals 2 damage to any target.", effect="damage:2", targets="any"),
    Card("Goblin Guide", "{R}", "Creature — Goblin Scout",
         "Haste\nWhenever Goblin Guide attacks, defending player reveals the top card of their library. If it's "
         "a land card, that player puts it into their hand.", 2, 2),
    Card("Hill Giant", "{3}{R}", "Creature — Giant", "", 3, 3),
    Card("Shivan Dragon", "{4}{R}{R}", "Creature — Dragon", "Flying\n{R}: Shivan Dragon gets +1/+0 until end of turn.",
         5, 5, effect="firebreathing"),
    Card("Forked Bolt", "{R}", "Sorcery",
         "Forked Bolt deals 2 damage divided as you choose among one or two targets.", effect="damage:1",
         targets="any2"),
    Card("Glorious Anthem", "{1}{W}{W}", "Enchantment", "Creatures you control get +1/+1.", effect="anthem"),
)}

LAND_COLOUR = {"Plains": "W", "Island": "U", "Swamp": "B", "Mountain": "R", "Forest": "G"}

DECKS: dict[str, list[str]] = {
    "red-green": (["Mountain"] * 8 + ["Forest"] * 8 + ["Llanowar Elves"] * 2 + ["Grizzly Bears"] * 3
                  + ["Centaur Courser"] * 3 + ["Goblin Guide"] * 3 + ["Hill Giant"] * 2 + ["Craw Wurm"]
                  + ["Shivan Dragon"] + ["Lightning Bolt"] * 3 + ["Shock"] * 2 + ["Giant Growth"] * 2
                  + ["Rancor"] + ["Forked Bolt"] + ["Giant Spider"]),
    "white-blue": (["Plains"] * 8 + ["Island"] * 8 + ["Savannah Lions"] * 3 + ["Wall of Omens"] * 2
                   + ["Serra Angel"] * 2 + ["Air Elemental"] * 2 + ["Prodigal Sorcerer"] * 2 + ["Pacifism"] * 2
                   + ["Counterspell"] * 3 + ["Divination"] * 2 + ["Wrath of God"] + ["Healing Salve"]
                   + ["Glorious Anthem"] + ["Savannah Lions"]),
    "black-red": (["Swamp"] * 8 + ["Mountain"] * 8 + ["Typhoid Rats"] * 3 + ["Vampire Nighthawk"] * 3
                  + ["Goblin Guide"] * 2 + ["Hill Giant"] * 2 + ["Doom Blade"] * 2 + ["Murder"] * 2
                  + ["Lightning Bolt"] * 2 + ["Mind Rot"] + ["Shock"] * 2 + ["Shivan Dragon"] + ["Grizzly Bears"] * 0
                  + ["Forked Bolt"] + ["Typhoid Rats"]),
}


def definitions(names: list[str] | set[str]) -> dict[str, dict[str, object]]:
    return {n: CARDS[n].definition() for n in sorted(set(names))}
