"""The variables every prompt template receives, built from a :class:`TurnView`.

This is the whole contract between code and templates: README lists these names, and start-up
renders every template with :func:`sample_context` so a misspelt variable fails at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent.core.memory import Memory
from agent.games.tangram.contract import TurnView
from agent.games.tangram.geometry.describe import describe_board
from agent.games.tangram.geometry.frames import normalize_rotation
from agent.games.tangram.geometry.pieces import PIECE_NAMES
from agent.games.tangram.geometry.relations import DIRECTIONAL_RELATIONS, relation_vocabulary
from agent.games.tangram.llm_player.salvage import Problem
from agent.games.tangram.planner.candidates import NO_CANDIDATES, CandidateSet
from agent.games.tangram.protocol import GameState, OnBoardPiece

TEMPLATE_NAMES = ("system", "play", "feedback", "chat")
"""The templates a tangram prompt folder must hold."""
REASK_TEMPLATE = "reask"
"""Also required when ``llm.max_reasks`` is above 0: the corrective message after an unusable answer."""
NO_PROBLEM = {"kind": "", "detail": "", "piece": "", "missing": []}
MOVED_BY = {"agent": "you", "partner": "your partner"}
"""``on_board[].moved_by``: who moved the piece last, in the prompt's own words (the model is "you")."""


def _round(v: float) -> float:
    return round(v, 1)


def marks_context(candidates: CandidateSet = NO_CANDIDATES, marks: Sequence[str] = (),
                  drawer_marks: Sequence[str] = ()) -> dict[str, Any]:
    """The template variables about checked candidates and the marks drawn on the images."""
    return {
        "candidates": [c.for_prompt() for c in candidates.candidates],
        "candidate_status": candidates.status,
        "candidate_figure": candidates.figure,
        "candidate_match": candidates.match,
        "marks": list(marks),
        "drawer_marks": list(drawer_marks),
    }


def board_text(view: TurnView) -> str:
    """What the geometry engine sees on the board, in words (shapely searches: milliseconds)."""
    return describe_board(view.board()).text


def build_context(view: TurnView, *, history: int, max_attempts: int = 0,
                  planner_hint: str | None = None, board_description: str | None = None,
                  constraints: list[str] | None = None, fixed: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Every template variable for ``view``; ``board_description`` when already made (else it is
    made here: :func:`board_text`); ``constraints`` what the partner asked never to be done (agreed to
    in the chat) and ``fixed`` the pieces on the board that therefore must not be moved."""
    on_board = [
        {"name": name, "x": _round(p.position[0]), "y": _round(p.position[1]),
         "rotation": _round(normalize_rotation(p.rotation)), "collisions": list(p.collisions),
         "moved_by": MOVED_BY.get(view.movers.get(name, ""), "")}
        for name, p in sorted(view.state.on_board.items())
    ]
    off_board = [n for n in PIECE_NAMES if n not in view.state.on_board]
    prev = None
    if view.previous is not None and view.previous.pose is not None:
        pose = view.previous.pose
        mx, my = pose.marker_board()
        prev = {"piece": pose.piece, "x": _round(mx), "y": _round(my),
                "rotation": _round(normalize_rotation(pose.rotation))}
    return {
        "objective": view.objective or "a figure of your choice",
        "on_board": on_board,
        "off_board": off_board,
        "piece_names": list(PIECE_NAMES),
        "relations": relation_vocabulary(),
        "combinable_relations": list(DIRECTIONAL_RELATIONS),
        "board_description": board_description if board_description is not None else board_text(view),
        "history": [{"speaker": e.speaker, "text": e.text} for e in view.memory.recent(history)] if history else [],
        "has_board_image": view.board_png is not None,
        "has_drawer_image": view.drawer_png is not None,
        "planner_hint": planner_hint,
        "constraints": list(constraints or []),
        "fixed": sorted(fixed),
        "message": view.message,
        "collisions": list(view.collisions),
        "previous": prev or {"piece": "", "x": 0.0, "y": 0.0, "rotation": 0.0},
        "attempt": view.attempt,
        "max_attempts": max_attempts,
        **marks_context(),
        "problem": NO_PROBLEM,
        "compact": False,
    }


def problem_context(problem: Problem) -> dict[str, Any]:
    """The ``problem`` variable of the re-ask template: what was wrong with the last answer
    (:data:`~agent.games.tangram.llm_player.salvage.ProblemKind`), the piece it named, the pieces it needs on
    the board that are not there."""
    return {"kind": problem.kind, "detail": problem.detail, "piece": problem.piece or "",
            "missing": list(problem.missing)}


def sample_context(candidates: int = 2) -> dict[str, Any]:
    """A fully populated context, used to check templates at start-up; ``candidates`` offered (at most
    as many as the planner finds for the sample position)."""
    state = GameState(on_board={"Red": OnBoardPiece(position=(50.0, 60.0), vertices=[], rotation=180.0,
                                                     collisions=["Cream"])})
    memory = Memory(4)
    memory.add("player", "Let's make the roof first")
    memory.add("agent", "I placed Red as the roof.")
    from agent.games.tangram.contract import Decision
    from agent.games.tangram.geometry.frames import Pose
    view = TurnView(objective="A house", state=state, memory=memory, board_png=b"", drawer_png=b"",
                    message="Can you use Blue?", collisions=["Cream"],
                    previous=Decision(Pose("Cream", 40.0, 40.0, 90.0), "x"), attempt=1, movers={"Red": "agent"})
    context = build_context(view, history=4, max_attempts=3, planner_hint="place Cream under Red as a wall.",
                            constraints=["never move the partner's pieces"], fixed=frozenset({"Red"}))
    from agent.games.tangram.planner.candidates import propose_candidates

    offered = propose_candidates("A house", view.board(), candidates)
    context["problem"] = problem_context(Problem("anchor_off_board", "Blue not on the board", "Green", ("Blue",)))
    return {**context, **marks_context(offered, ["grid", "labels", "candidates"], ["labels"])}
