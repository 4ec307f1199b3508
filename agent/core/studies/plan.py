"""A study's plan: the order sequences its design gives, which one the next participant gets, and
the plan's hash. Pure functions and frozen values; the store keeps who got what.

- *within*: every participant plays every condition; the sequences are the rows of a balanced
  Latin square (:mod:`.latin`): n of them for an even number n of conditions, 2n for an odd n.
- *between*: every participant plays one condition; one sequence per condition.
- *fixed*: every participant plays the conditions in one given order.

The next participant gets the sequence held by the fewest participants who have not dropped out
(paused and completed ones count), the first in plan order on a tie. With nobody dropping out that
is each sequence in turn; a dropped participant's sequence goes to the next participant started,
so the counts stay level and a multiple of the sequence count of completed participants stays a
balanced design. Between subjects, a condition whose quota is reached is skipped.

A ``seed`` shuffles which condition takes which place of the square (between subjects: the
rotation); the same seed gives the same plan, and no seed keeps the conditions as listed.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from agent.core.studies.latin import balanced_latin_square

Design = Literal["within", "between", "fixed"]
DESIGNS: tuple[Design, ...] = ("within", "between", "fixed")


@dataclass(frozen=True)
class Slot:
    """One game of a participant's sequence."""

    position: int
    """1-based place of the game among all the participant's games."""
    condition: str
    order: int
    """1-based place of the condition in the participant's sequence."""
    repeat: int
    """1-based game of this condition (games_per_condition > 1)."""


@dataclass(frozen=True)
class Plan:
    design: Design
    conditions: tuple[str, ...]
    """As the study file lists them."""
    sequences: tuple[tuple[str, ...], ...]
    games_per_condition: int = 1
    quotas: tuple[tuple[str, int], ...] = ()
    seed: int | None = None
    hash: str = field(default="", compare=False)

    def slots(self, sequence: int) -> list[Slot]:
        """The games of sequence ``sequence``, in order."""
        out: list[Slot] = []
        for order, condition in enumerate(self.sequences[sequence], start=1):
            for repeat in range(1, self.games_per_condition + 1):
                out.append(Slot(len(out) + 1, condition, order, repeat))
        return out

    def games_per_participant(self) -> int:
        return len(self.sequences[0]) * self.games_per_condition if self.sequences else 0

    def quota_of(self, sequence: int) -> int | None:
        """Between subjects: the most participants the sequence's condition takes (None: no cap)."""
        if self.design != "between":
            return None
        return dict(self.quotas).get(self.sequences[sequence][0])

    def choose_sequence(self, holders: Mapping[int, int]) -> int | None:
        """The sequence for the next participant, given how many participants who have not
        dropped out hold each; None when every sequence is at its quota."""
        open_ = [i for i in range(len(self.sequences))
                 if (q := self.quota_of(i)) is None or holders.get(i, 0) < q]
        if not open_:
            return None
        return min(open_, key=lambda i: (holders.get(i, 0), i))

    def describe(self) -> dict[str, object]:
        """What the hash covers, as plain data (also stored with the study)."""
        return {"design": self.design, "conditions": list(self.conditions),
                "sequences": [list(s) for s in self.sequences], "games_per_condition": self.games_per_condition,
                "quotas": dict(self.quotas), "seed": self.seed}


def plan_hash(described: Mapping[str, object]) -> str:
    """16 hex digits of the SHA-256 of the plan's canonical JSON."""
    canonical = json.dumps(described, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def make_plan(design: Design, conditions: Sequence[str], *, games_per_condition: int = 1,
              order: Sequence[str] | None = None, quotas: Mapping[str, int] | None = None,
              seed: int | None = None) -> Plan:
    """The plan of a checked study (names already known to exist; ValueError otherwise)."""
    names = list(conditions)
    if not names:
        raise ValueError("a plan needs at least one condition")
    unknown = [n for n in [*(order or []), *(quotas or {})] if n not in names]
    if unknown:
        raise ValueError(f"unknown condition {unknown[0]!r}")
    placed = random.Random(seed).sample(names, len(names)) if seed is not None else names
    if design == "within":
        sequences = [tuple(placed[i] for i in row) for row in balanced_latin_square(len(placed))]
    elif design == "between":
        sequences = [(name,) for name in placed]
    else:
        sequences = [tuple(order or names)]
    plan = Plan(design, tuple(names), tuple(sequences), games_per_condition,
                tuple(sorted((quotas or {}).items())), seed)
    return Plan(plan.design, plan.conditions, plan.sequences, plan.games_per_condition, plan.quotas, plan.seed,
                plan_hash(plan.describe()))
