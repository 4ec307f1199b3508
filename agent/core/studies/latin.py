"""Balanced Latin squares (Williams designs): orders of conditions that balance both the place of
each condition and which condition follows which (first-order carry-over).

For an even number of conditions n, n sequences: the first is 0, 1, n-1, 2, n-2, 3, ...; each
next one adds 1 modulo n. For an odd n no n-row square balances carry-over, so the square is
followed by its mirror (every row reversed): 2n sequences. Pure functions over condition indices.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence

MAX_CONDITIONS = 12


def williams_first_row(n: int) -> list[int]:
    """0, 1, n-1, 2, n-2, 3, ...: the first sequence of a Williams square of ``n`` conditions."""
    if not 1 <= n <= MAX_CONDITIONS:
        raise ValueError(f"a balanced Latin square needs 1 to {MAX_CONDITIONS} conditions, not {n}")
    row = [0]
    low, high = 1, n - 1
    take_low = True
    while len(row) < n:
        if take_low:
            row.append(low)
            low += 1
        else:
            row.append(high)
            high -= 1
        take_low = not take_low
    return row


def balanced_latin_square(n: int) -> list[list[int]]:
    """The sequences of a balanced Latin square of ``n`` conditions: n of them for an even n (or
    n = 1), 2n for an odd n (the square, then its mirror)."""
    first = williams_first_row(n)
    square = [[(c + r) % n for c in first] for r in range(n)]
    if n % 2 == 1 and n > 1:
        square += [list(reversed(row)) for row in square]
    return square


def position_counts(sequences: Sequence[Sequence[int]]) -> dict[tuple[int, int], int]:
    """How often each condition stands at each place: {(place, condition): count}."""
    return dict(Counter((place, c) for row in sequences for place, c in enumerate(row)))


def carryover_counts(sequences: Sequence[Sequence[int]]) -> dict[tuple[int, int], int]:
    """How often each condition directly follows each other one: {(before, after): count}."""
    return dict(Counter((a, b) for row in sequences for a, b in itertools.pairwise(row)))
