"""Choosing the next move toward the figure: one piece per turn, always a valid pose.

Pieces already in their slot (whoever placed them) are never moved. Of the others, the move that
adds most to the figure comes first: a piece's area, plus, for a piece lying outside the figure,
the area it stops covering there (so big pieces come first, and a misplaced piece, which the
figure needs and which stands where it does not belong, comes before a drawer piece of its size).
A slot counts as free when its exact pose, or one within a few pixels, is valid; a slot blocked
by a misplaced piece waits for that piece to move. When every open slot is blocked, a piece in
the way is parked just outside the figure; as a last resort a slot is filled a little further off.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from shapely.ops import unary_union

from agent.games.tangram.geometry.collide import CLEARANCE_PX
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.planner import shapes
from agent.games.tangram.planner.anchor import Fit
from agent.games.tangram.planner.library import Figure
from agent.games.tangram.planner.search import nearest_valid, park

NEAR_PX = 6.0
"""How far from its slot a piece may go when a near-miss neighbour crowds it."""
FAR_PX = 16.0
"""The same, as a last resort, when a piece already in place blocks the slot outright."""
LAST_RESORT_PX = 80.0
"""When a piece the human moved (or asked us to move) covers a slot, its piece still goes near."""
_NEIGHBOUR_PX = 6.0

Action = Literal["place", "move", "clear", "complete", "stuck"]


@dataclass(frozen=True)
class Step:
    action: Action
    piece: str | None = None
    pose: Pose | None = None
    slot: str | None = None
    """For place/move: the slot the piece fills. For clear: the slot it was in the way of."""
    nudged: bool = False
    neighbour: str | None = None
    """A slot already built that the new piece touches, for the chat."""
    human: bool = False
    """The piece moved is one the human placed."""
    blocking: str | None = None
    """For a human's piece moved into its slot: the slot it was in the way of."""


def build_order(figure: Figure, fit: Fit) -> list[str]:
    return [fit.piece_for_slot(s) for s in figure.order]


def _neighbour(figure: Figure, fit: Fit, piece: str, pose: Pose) -> str | None:
    poly = shapes.polygon(pose)
    best: tuple[float, str] | None = None
    for other in fit.matched:
        if other == piece:
            continue
        d = poly.distance(shapes.polygon(fit.targets[other]))
        if d <= _NEIGHBOUR_PX and (best is None or d < best[0]):
            best = (d, fit.slot_of[other])
    return best[1] if best else None


def _in_the_way_of(fit: Fit, board: Mapping[str, Pose], piece: str, todo: list[str]) -> str | None:
    """The first unfinished slot (build order) that ``piece``, where it lies now, overlaps."""
    if piece not in board:
        return None
    mine = shapes.polygon(board[piece]).buffer(CLEARANCE_PX, join_style="mitre")
    for q in todo:
        if q != piece and mine.intersects(shapes.polygon(fit.targets[q])):
            return fit.slot_of[q]
    return None


def next_step(figure: Figure, fit: Fit, board: Mapping[str, Pose], ours: frozenset[str] = frozenset(),
              clearance: float = CLEARANCE_PX, avoid: Pose | None = None,
              skip: frozenset[str] = frozenset(), keep: frozenset[str] = frozenset(),
              first: str | None = None) -> Step:
    """The next move toward ``fit``'s targets.

    ``ours`` are the board pieces we placed; ``skip`` pieces are not to be moved this time (the
    game just rejected them, or the human asked to leave them where they are); ``keep`` pieces are
    never moved, not even when they are in the way of a part (the human asked us to leave their
    pieces alone: the rest is built around them); ``first`` is tried before the others (the human
    asked for it).
    """
    order = build_order(figure, fit)
    todo = [p for p in order if p not in fit.matched]
    if not todo:
        return Step("complete")
    drawer = [p for p in todo if p not in board and p not in skip]
    stray = [p for p in todo if p in board and p not in skip and p not in keep]

    def attempt(p: str, max_px: float, strict: bool = True) -> Pose | None:
        pose = nearest_valid(fit.targets[p], board, max_px=max_px, clearance=clearance, avoid=avoid)
        if pose is not None and p in board and shapes.placement_error(pose, board[p]) < 0.5:
            return None  # it is already as close as it can get: moving it would change nothing
        if pose is None or not strict or shapes.placement_error(pose, fit.targets[p]) <= 0.5:
            return pose
        # Off its slot: fine when a piece already in place (a little off) crowds it, but when a
        # misplaced piece is in the way, that piece should move first instead.
        grown = shapes.polygon(fit.targets[p]).buffer(clearance, join_style="mitre")
        in_way = [n for n, q in board.items() if n != p and grown.intersects(shapes.polygon(q))]
        return pose if all(n in fit.matched for n in in_way) else None

    def made(action: Action, p: str, pose: Pose, blocking: str | None = None) -> Step:
        nudged = shapes.placement_error(pose, fit.targets[p]) > 0.5
        return Step(action, p, pose, fit.slot_of[p], nudged, _neighbour(figure, fit, p, pose),
                    human=p in board and p not in ours, blocking=blocking)

    # Best first: what a move adds to the figure is the piece's area, plus for a piece lying
    # outside the figure the area it stops covering there. Drawer pieces keep the build order,
    # each counting as the biggest piece still to come from the drawer (so the order is kept
    # and big pieces still come early); a stray piece goes before them only when it adds more.
    silhouette = unary_union([shapes.polygon(fit.targets[p]) for p in order])
    gain: dict[str, float] = {}
    running = 0.0
    for p in reversed(drawer):
        running = max(running, shapes.piece_area(p))
        gain[p] = running
    for p in stray:
        gain[p] = shapes.piece_area(p) + shapes.polygon(board[p]).difference(silhouette).area
    position = {p: i for i, p in enumerate(order)}
    ranked = sorted(drawer + stray,
                    key=lambda p: (p != first, -round(gain[p], -1), p in board, position[p]))
    for p in ranked:
        pose = attempt(p, NEAR_PX)
        if pose is not None:
            if p not in board:
                return made("place", p, pose)
            return made("move", p, pose, _in_the_way_of(fit, board, p, todo))
    # Every open slot is blocked. Park the first piece in the way (not one already in place).
    keep_out = [shapes.polygon(fit.targets[p]) for p in todo]
    for p in stray:
        blocking = _in_the_way_of(fit, board, p, todo)
        if blocking is None:
            continue
        pose = park(board[p], board, keep_out, clearance=clearance)
        if pose is not None and (avoid is None or shapes.placement_error(pose, avoid) > 0.5):
            return Step("clear", p, pose, fit.slot_of[p], human=p not in ours, blocking=blocking)
    for max_px in (FAR_PX, LAST_RESORT_PX):
        for p in drawer + stray:
            pose = attempt(p, max_px, strict=False)
            if pose is not None:
                return made("move" if p in board else "place", p, pose)
    return Step("stuck")
