"""What the agent reads from a card definition: mana value, colours, types, power/toughness, keywords.

Forge sends ``card_definitions`` {name: {mana_cost, type, oracle_text, power?, toughness?}}. Mana
costs come as ``{2}{R}{R}`` (Scryfall style) or ``2 R R`` (Forge's card scripts); both are read.
Everything here is pure and cheap, so the heuristic can call it for every option of every request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

COLOURS = frozenset("WUBRG")

# Keywords the heuristic weighs; read from oracle text with word boundaries so that
# "flying" in "target creature with flying" still counts only when it is a keyword line.
EVASION = ("flying", "menace", "trample", "shadow", "fear", "intimidate", "horsemanship")
KEYWORDS = (
    "flying", "reach", "first strike", "double strike", "deathtouch", "lifelink", "trample",
    "vigilance", "haste", "menace", "hexproof", "indestructible", "defender", "unblockable",
)

_SYMBOL = re.compile(r"\{([^}]*)\}")


@dataclass(frozen=True, slots=True)
class ManaCost:
    value: int
    """Mana value (converted mana cost); X counts 0."""
    colours: frozenset[str]
    has_x: bool


@lru_cache(maxsize=4096)
def parse_mana_cost(text: str | None) -> ManaCost:
    """Read ``{2}{R}{R}``, ``2 R R``, ``{W/U}``, ``{X}{G}`` or ``no cost``; unknown symbols count 1."""
    if not text:
        return ManaCost(0, frozenset(), False)
    symbols = _SYMBOL.findall(text) if "{" in text else text.replace(",", " ").split()
    value = 0
    colours: set[str] = set()
    has_x = False
    for raw in symbols:
        sym = raw.strip().upper()
        if not sym or sym in ("NO", "COST", "NONE", "T", "Q", "E"):
            continue  # tap, untap and energy symbols are no mana
        if sym.isdigit():
            value += int(sym)
            continue
        if sym in ("X", "Y", "Z"):
            has_x = True
            continue
        # Hybrid and Phyrexian symbols ({W/U}, {2/B}, {G/P}) pay one symbol's worth.
        parts = sym.split("/")
        if parts[0].isdigit():
            value += int(parts[0])
        elif all(len(p) == 1 for p in parts) or len(sym) == 1:
            value += 1
        else:
            # Forge's "WU" style hybrid shorthand, or letters run together ("RR").
            value += len(sym) if set(sym) <= COLOURS | {"C"} else 1
        colours.update(c for c in sym if c in COLOURS)
    return ManaCost(value, frozenset(colours), has_x)


def _as_int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        m = re.match(r"^\s*([+-]?\d+)", value)
        return int(m.group(1)) if m else 0 if value.strip() in ("*", "X") else None
    return None


@dataclass(frozen=True, slots=True)
class CardFacts:
    """What the heuristic knows about one card name."""

    name: str
    cost: ManaCost
    type_line: str
    oracle: str
    power: int | None
    toughness: int | None

    @property
    def is_land(self) -> bool:
        return "land" in self.type_line.lower()

    @property
    def is_creature(self) -> bool:
        return "creature" in self.type_line.lower()

    @property
    def is_instant(self) -> bool:
        return "instant" in self.type_line.lower() or has_keyword(self.oracle, "flash")

    @property
    def is_permanent(self) -> bool:
        t = self.type_line.lower()
        return any(w in t for w in ("creature", "artifact", "enchantment", "planeswalker", "land", "battle"))

    def has(self, keyword: str) -> bool:
        return has_keyword(self.oracle, keyword)


UNKNOWN = CardFacts("", ManaCost(0, frozenset(), False), "", "", None, None)


def card_facts(name: str, mana_cost: str | None, type_line: str | None, oracle: str | None,
               power: object, toughness: object) -> CardFacts:
    return CardFacts(name, parse_mana_cost(mana_cost or ""), type_line or "", oracle or "",
                     _as_int(power), _as_int(toughness))


@lru_cache(maxsize=8192)
def _keyword_lines(oracle: str) -> frozenset[str]:
    """Keywords a card has itself: those on keyword lines ("Flying, vigilance"), not in rules text."""
    found: set[str] = set()
    for line in oracle.lower().replace("\r", "\n").split("\n"):
        line = re.sub(r"\([^)]*\)", "", line).strip()  # drop reminder text
        if not line:
            continue
        parts = [p.strip().rstrip(".") for p in line.split(",")]
        if all(any(p == k or p.startswith(k + " ") for k in (*KEYWORDS, "flash", "protection", "ward"))
               for p in parts if p):
            found.update(p for p in parts if p)
            found.update(k for p in parts for k in (*KEYWORDS, "flash") if p.startswith(k))
        elif "can't be blocked" in line and line.startswith(("this creature", "~", "cardname")):
            found.add("unblockable")
        elif "can't block" in line and line.startswith(("this creature", "~", "cardname")):
            found.add("can't block")
    return frozenset(found)


def has_keyword(oracle: str, keyword: str) -> bool:
    return keyword in _keyword_lines(oracle)


# ---- what a spell's text does ---------------------------------------------------------------------

_DAMAGE = re.compile(r"deals? (\d+|x) damage (?:divided as you choose among (?:one or two|any number of) )?"
                     r"(?:to )?(any target|target creature|target player|target opponent|each creature|each opponent|"
                     r"target creature or planeswalker|target creature or player|targets)")
_DESTROY = re.compile(r"(destroy|exile) target (creature|nonland permanent|permanent|artifact|enchantment|"
                      r"planeswalker|nonblack creature|nonartifact creature|tapped creature|attacking creature)")
_MINUS = re.compile(r"target creature gets? -(\d+)/-(\d+)")
_PUMP = re.compile(r"target creature( you control)? gets? \+(\d+)/\+(\d+)")
_DRAW = re.compile(r"draws? (a|one|two|three|four|\d+) cards?")
_GAIN = re.compile(r"gains? (\d+) life")
_WORDS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "x": 0}


@dataclass(frozen=True, slots=True)
class Effect:
    """A rough reading of a spell's rules text: enough to value it and to pick its targets."""

    damage: int = 0
    damage_to_creatures: bool = False
    damage_to_players: bool = False
    destroys: bool = False
    shrink: int = 0
    pump: int = 0
    draw: int = 0
    gain: int = 0
    counters_spell: bool = False
    bounces: bool = False
    taps: bool = False
    sweeper: bool = False

    @property
    def harmful(self) -> bool:
        return bool(self.damage or self.destroys or self.shrink or self.counters_spell or self.bounces or self.taps)

    @property
    def removal(self) -> bool:
        return bool(self.destroys or self.shrink or (self.damage and self.damage_to_creatures) or self.bounces)


@lru_cache(maxsize=4096)
def read_effect(oracle: str) -> Effect:
    text = oracle.lower()
    damage = 0
    to_creatures = to_players = sweeper = False
    for m in _DAMAGE.finditer(text):
        n = _WORDS.get(m.group(1))
        damage = max(damage, n if n is not None else int(m.group(1)))
        what = m.group(2)
        anything = what in ("any target", "targets")
        to_creatures |= "creature" in what or anything
        to_players |= "player" in what or "opponent" in what or anything
        sweeper |= what == "each creature"
    destroy = _DESTROY.search(text) is not None
    sweeper |= "destroy all creatures" in text
    shrink = max((int(m.group(2)) for m in _MINUS.finditer(text)), default=0)
    pump = max((int(m.group(2)) + int(m.group(3)) for m in _PUMP.finditer(text)), default=0)
    draw = 0
    for m in _DRAW.finditer(text):
        word = m.group(1)
        draw = max(draw, _WORDS[word] if word in _WORDS else int(word))
    gain = max((int(m.group(1)) for m in _GAIN.finditer(text)), default=0)
    counters = "counter target" in text and "spell" in text
    bounces = "return target" in text and "to its owner's hand" in text and "from your graveyard" not in text
    taps = "tap target" in text and not destroy
    return Effect(damage=damage, damage_to_creatures=to_creatures, damage_to_players=to_players,
                  destroys=destroy, shrink=shrink, pump=pump, draw=draw, gain=gain, counters_spell=counters,
                  bounces=bounces, taps=taps, sweeper=sweeper)
