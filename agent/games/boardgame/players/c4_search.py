"""Connect-four search: bitboards, alpha-beta negamax, a transposition table, iterative deepening.

The board is two integers in the usual layout (bit ``7*column + row``, row 0 at the bottom, one
spare bit on top of each column): ``current`` holds the discs of the side to move, ``mask`` all
discs. Every node first looks for an immediate win, then for the opponent's immediate threats
(one must be blocked, two lose), and never plays directly under an opponent's threat; the
remaining moves are ordered by the transposition table's best move, then by how many threats
they create, then centre first.

Two evaluation functions, and so two strengths:

* :func:`evaluate` (our player): threats (cells that would complete four) for both sides, with the
  row-parity rule of connect-four endgames (the first player's threats on odd rows and the
  second's on even rows are the ones that win when the board fills up), stacked threats, and
  centre control;
* :func:`evaluate_plain` (the engine's strong bot): threat count and centre only, searched to a
  fixed shallow depth with no table, so it is strong tactically but distinct and weaker.

Pure functions over ints; the caller runs a search in a worker thread (it takes up to its time
budget of CPU).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

from agent.games.boardgame.rules.connect_four import COLUMNS, ROWS, Position

H = ROWS
H1 = ROWS + 1
CELLS = ROWS * COLUMNS
BOTTOM = sum(1 << (c * H1) for c in range(COLUMNS))
BOARD = BOTTOM * ((1 << H) - 1)
COLUMN_MASKS = tuple(((1 << H) - 1) << (c * H1) for c in range(COLUMNS))
TOP_CELLS = tuple(1 << (H - 1 + c * H1) for c in range(COLUMNS))
BOTTOM_CELLS = tuple(1 << (c * H1) for c in range(COLUMNS))
CENTRE_ORDER = (3, 2, 4, 1, 5, 0, 6)
CENTRE = COLUMN_MASKS[3]
NEAR_CENTRE = COLUMN_MASKS[2] | COLUMN_MASKS[4]
# Rows counted from 0 at the bottom: rows 0, 2, 4 are the 1st, 3rd and 5th ("odd") rows.
ODD_ROWS = sum(1 << (c * H1 + r) for c in range(COLUMNS) for r in (0, 2, 4))
EVEN_ROWS = BOARD ^ ODD_ROWS

WIN = 1_000_000
"""Score of a win now; a win ``n`` plies away scores ``WIN - n``."""
MATE_ZONE = WIN - 100


class OutOfTime(Exception):
    pass


def encode(position: Position) -> tuple[int, int, int]:
    """``(current, mask, moves)`` of a rules position."""
    current = mask = 0
    moves = sum(len(col) for col in position)
    mover_mark = moves % 2 + 1
    for c, column in enumerate(position):
        for r, mark in enumerate(column):
            bit = 1 << (c * H1 + r)
            mask |= bit
            if mark == mover_mark:
                current |= bit
    return current, mask, moves


def popcount(x: int) -> int:
    return x.bit_count()


def has_four(discs: int) -> bool:
    for shift in (1, H1, H, H + 2):
        m = discs & (discs >> shift)
        if m & (m >> (2 * shift)):
            return True
    return False


def threats(discs: int, mask: int) -> int:
    """Empty cells where ``discs`` would complete four."""
    r = (discs << 1) & (discs << 2) & (discs << 3)
    for shift in (H1, H, H + 2):
        p = (discs << shift) & (discs << 2 * shift)
        r |= p & (discs << 3 * shift)
        r |= p & (discs >> shift)
        p = (discs >> shift) & (discs >> 2 * shift)
        r |= p & (discs << shift)
        r |= p & (discs >> 3 * shift)
    return r & (BOARD ^ mask)


def playable(mask: int) -> int:
    return (mask + BOTTOM) & BOARD


def evaluate(current: int, mask: int, moves: int) -> int:
    """Static value for the side to move (no immediate win on either side is left here)."""
    opponent = current ^ mask
    mine = threats(current, mask)
    theirs = threats(opponent, mask)
    first_to_move = moves % 2 == 0
    my_good = ODD_ROWS if first_to_move else EVEN_ROWS
    their_good = EVEN_ROWS if first_to_move else ODD_ROWS
    score = 40 * (popcount(mine) - popcount(theirs))
    score += 60 * (popcount(mine & my_good) - popcount(theirs & their_good))
    # Two threats one above the other win outright once the lower one is reached.
    score += 150 * (popcount(mine & (mine >> 1)) - popcount(theirs & (theirs >> 1)))
    score += 6 * (popcount(current & CENTRE) - popcount(opponent & CENTRE))
    score += 3 * (popcount(current & NEAR_CENTRE) - popcount(opponent & NEAR_CENTRE))
    return score


def evaluate_plain(current: int, mask: int, moves: int) -> int:
    opponent = current ^ mask
    score = 30 * (popcount(threats(current, mask)) - popcount(threats(opponent, mask)))
    score += 4 * (popcount(current & CENTRE) - popcount(opponent & CENTRE))
    return score


@dataclass
class SearchResult:
    move: int
    score: int
    depth: int
    nodes: int
    seconds: float


@dataclass
class _Entry:
    depth: int
    flag: int  # 0 exact, 1 lower bound, 2 upper bound
    score: int
    move: int


@dataclass
class Searcher:
    """One search configuration; the transposition table is kept between moves of a game."""

    evaluator: str = "full"
    use_table: bool = True
    table_limit: int = 400_000
    table: dict[int, _Entry] = field(default_factory=dict)
    nodes: int = 0
    _deadline: float = 0.0

    def _eval(self, current: int, mask: int, moves: int) -> int:
        if self.evaluator == "full":
            return evaluate(current, mask, moves)
        return evaluate_plain(current, mask, moves)

    def _negamax(self, current: int, mask: int, moves: int, depth: int, alpha: int, beta: int,
                 ply: int) -> tuple[int, int]:
        """(score, best column) for the side to move; column -1 at leaves."""
        self.nodes += 1
        if self.nodes & 1023 == 0 and time.monotonic() > self._deadline:
            raise OutOfTime
        possible = playable(mask)
        opponent = current ^ mask
        mine = threats(current, mask)
        win_now = mine & possible
        if win_now:
            return WIN - ply - 1, _column_of(win_now)
        if moves >= CELLS - 1:
            return 0, _first_column(possible)
        theirs = threats(opponent, mask)
        forced = possible & theirs
        if forced:
            if forced & (forced - 1):
                return -(WIN - ply - 2), _column_of(forced)
            possible = forced
        safe = possible & ~(theirs >> 1)
        if not safe:
            return -(WIN - ply - 2), _first_column(possible)
        if depth <= 0:
            return self._eval(current, mask, moves), -1

        key = current + mask
        alpha_orig = alpha
        tt_move = -1
        if self.use_table:
            entry = self.table.get(key)
            if entry is not None:
                tt_move = entry.move
                if entry.depth >= depth:
                    score = _from_table(entry.score, ply)
                    if entry.flag == 0:
                        return score, entry.move
                    if entry.flag == 1:
                        alpha = max(alpha, score)
                    else:
                        beta = min(beta, score)
                    if alpha >= beta:
                        return score, entry.move

        ordered: list[tuple[int, int, int]] = []
        for rank, c in enumerate(CENTRE_ORDER):
            bit = safe & COLUMN_MASKS[c]
            if bit:
                created = popcount(threats(current | bit, mask | bit))
                ordered.append((0 if c == tt_move else 1, -created, rank))
        ordered.sort()
        best_score, best_move = -WIN - 1, -1
        for _, _, rank in ordered:
            c = CENTRE_ORDER[rank]
            bit = safe & COLUMN_MASKS[c]
            score = -self._negamax(opponent, mask | bit, moves + 1, depth - 1, -beta, -alpha, ply + 1)[0]
            if score > best_score:
                best_score, best_move = score, c
            alpha = max(alpha, score)
            if alpha >= beta:
                break

        if self.use_table:
            flag = 0 if alpha_orig < best_score < beta else (1 if best_score >= beta else 2)
            if len(self.table) >= self.table_limit:
                self.table.clear()  # bound memory; the next iterations refill what matters
            self.table[key] = _Entry(depth, flag, _to_table(best_score, ply), best_move)
        return best_score, best_move

    def search(self, position: Position, *, seconds: float, max_depth: int = CELLS,
               rng: random.Random | None = None) -> SearchResult:
        """The best column found within ``seconds`` (at least depth 1 is always completed)."""
        started = time.monotonic()
        current, mask, moves = encode(position)
        self.nodes = 0
        legal = [c for c in range(COLUMNS) if not mask & TOP_CELLS[c]]
        if not legal:
            raise ValueError("no legal move: the board is full")
        best = SearchResult(legal[0] if 3 not in legal else 3, 0, 0, 0, 0.0)
        self._deadline = float("inf")
        for depth in range(1, max(1, min(max_depth, CELLS - moves)) + 1):
            try:
                score, move = self._root(current, mask, moves, depth, rng)
            except OutOfTime:
                break
            best = SearchResult(move, score, depth, self.nodes, time.monotonic() - started)
            if abs(score) >= MATE_ZONE:
                break  # a forced result: deeper search cannot change it
            self._deadline = started + seconds
            if time.monotonic() > started + seconds * 0.5:
                break  # the next depth would take several times longer than this one
        best.nodes, best.seconds = self.nodes, time.monotonic() - started
        return best

    def _root(self, current: int, mask: int, moves: int, depth: int,
              rng: random.Random | None) -> tuple[int, int]:
        if rng is None:
            return self._negamax(current, mask, moves, depth, -WIN - 1, WIN + 1, 0)
        # Random tie-breaks among equally good moves: full-window scores for each column.
        possible = playable(mask)
        scores: list[tuple[int, int]] = []
        for c in CENTRE_ORDER:
            bit = possible & COLUMN_MASKS[c]
            if not bit:
                continue
            if has_four(current | bit):
                return WIN - 1, c
            score = -self._negamax(current ^ mask, mask | bit, moves + 1, depth - 1, -WIN - 1, WIN + 1, 1)[0]
            scores.append((score, c))
        top = max(s for s, _ in scores)
        return top, rng.choice([c for s, c in scores if s == top])


def _column_of(bits: int) -> int:
    return ((bits & -bits).bit_length() - 1) // H1 if bits else -1


def _first_column(possible: int) -> int:
    for c in CENTRE_ORDER:
        if possible & COLUMN_MASKS[c]:
            return c
    return -1


def _to_table(score: int, ply: int) -> int:
    if score >= MATE_ZONE:
        return score + ply
    if score <= -MATE_ZONE:
        return score - ply
    return score


def _from_table(score: int, ply: int) -> int:
    if score >= MATE_ZONE:
        return score - ply
    if score <= -MATE_ZONE:
        return score + ply
    return score


def strong_move(position: Position, searcher: Searcher, seconds: float) -> SearchResult:
    """Our connect-four player's move: iterative deepening with the full evaluation."""
    return searcher.search(position, seconds=seconds)


def bot_move(position: Position, depth: int, rng: random.Random) -> SearchResult:
    """The engine's strong bot: a fixed-depth search with the plain evaluation, ties broken at random."""
    searcher = Searcher(evaluator="plain", use_table=False)
    return searcher.search(position, seconds=float("inf"), max_depth=depth, rng=rng)
