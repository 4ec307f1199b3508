"""Checked candidates: a few placements toward the objective, offered to an LLM by letter.

A vision model is poor at turning a picture into exact coordinates; the planner and the geometry
engine are exact. So before an LLM turn the planner proposes up to N distinct moves (each a
different piece) that build the figure it would build here, every one verified clear of the board
edge and of every other piece; the model may name one instead of inventing its own.

Pure and synchronous (tens of milliseconds of shapely work): call it through ``asyncio.to_thread``.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from agent.games.tangram.geometry.collide import CLEARANCE_PX, is_valid
from agent.games.tangram.geometry.frames import Pose, normalize_rotation
from agent.games.tangram.planner.anchor import fit_anchor
from agent.games.tangram.planner.library import FigureLibrary, load_library
from agent.games.tangram.planner.matching import MatchKind, match_objective, match_text
from agent.games.tangram.planner.steps import next_step

LETTERS = string.ascii_uppercase
Status = Literal["ok", "complete", "stuck", "off"]


@dataclass(frozen=True, slots=True)
class Candidate:
    letter: str
    pose: Pose
    """Exactly what is played when the model names this letter (node origin, board units)."""
    action: Literal["place", "move", "clear"]
    """place: from the drawer; move: a board piece into its part; clear: a board piece out of the way."""
    part: str
    """The figure's part the move builds (for clear: the part it was in the way of)."""
    figure: str

    @property
    def piece(self) -> str:
        return self.pose.piece

    def for_prompt(self) -> dict[str, object]:
        """What the templates get: the centre as the state reports it, so it reads like the rest of the prompt."""
        mx, my = self.pose.marker_board()
        return {"letter": self.letter, "piece": self.piece, "x": round(mx, 1), "y": round(my, 1),
                "rotation": round(normalize_rotation(self.pose.rotation), 1), "action": self.action,
                "part": self.part, "figure": self.figure}


@dataclass(frozen=True, slots=True)
class CandidateSet:
    candidates: tuple[Candidate, ...]
    status: Status
    """ok: at least one candidate; complete: the figure is built; stuck: no clear place for any
    needed piece; off: none were asked for."""
    figure: str = ""
    match: MatchKind = "exact"
    """How the objective found the figure: exact (it names it), related (the nearest figure to what it
    names), none (no figure fits: the figure is only the planner's stand-in). The prompt says which."""

    @property
    def letters(self) -> list[str]:
        return [c.letter for c in self.candidates]

    def get(self, letter: str | None) -> Candidate | None:
        return next((c for c in self.candidates if c.letter == letter), None)


NO_CANDIDATES = CandidateSet((), "off")


def propose_candidates(objective: str, board: Mapping[str, Pose], count: int, *,
                       library: FigureLibrary | None = None, default_figure: str | None = None) -> CandidateSet:
    """Up to ``count`` distinct moves toward the figure for ``objective``, best first, each valid on
    ``board`` (inside it, a clearance from every other piece), each moving a different piece."""
    if count <= 0:
        return NO_CANDIDATES
    library = library or load_library()
    figure, _ = match_objective(objective, library, default_figure)
    match = match_text(objective, library).kind
    fit = fit_anchor(figure, board)
    found: list[Candidate] = []
    tried: set[str] = set()
    status: Status = "stuck"
    while len(found) < count:
        # Each round leaves out the pieces already proposed (or found unusable), so the next best
        # move of another piece comes up; the planner ranks them by what they add to the figure.
        step = next_step(figure, fit, board, skip=frozenset(tried))
        if step.action == "complete":
            status = "complete" if not found else status
            break
        if step.action == "stuck" or step.piece is None or step.pose is None or step.slot is None:
            break
        tried.add(step.piece)
        others = {n: p for n, p in board.items() if n != step.piece}
        if not is_valid(step.pose, others, CLEARANCE_PX):
            continue  # the planner's search should never return this; the offer must be exact
        slot = step.blocking if step.action == "clear" and step.blocking else step.slot
        found.append(Candidate(LETTERS[len(found)], step.pose, step.action, figure.parts.get(slot, slot),
                               figure.name))
    if found:
        status = "ok"
    return CandidateSet(tuple(found), status, figure.name, match)
