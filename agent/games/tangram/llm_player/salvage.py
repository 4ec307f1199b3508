"""The one validator of a model's move: keep what is usable in an imperfect LLM answer, and say what was changed.

Real vision models answer sloppily: an anchor still in the drawer, half of a two-anchor relation,
"rotate" for a piece that is not on the board, coordinates off the board, the piece itself as its
own anchor, a field of the wrong type. Refusing such an answer costs the participant a turn, so
:func:`salvage_answer` turns it into the nearest move the answer supports and records each change
as a :class:`Salvage` (what the model said, what is played instead, why). When nothing usable is
left (no piece, no place, no JSON) it returns a :class:`Problem` instead: what exactly is wrong and
which facts the model got wrong, for the corrective re-ask (``prompts/tangram/reask.j2``).

Every path that reads a model's move goes through :func:`salvage_answer`, a named candidate letter
included (played exactly as offered, whatever else the answer says). Pure: it looks at names and
numbers only. Geometry (resolving relations, repairing the pose)
happens afterwards, on the salvaged move.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from pydantic import ValidationError

from agent.games.tangram.geometry.frames import BOARD_UNITS
from agent.games.tangram.geometry.pieces import PIECE_NAMES
from agent.games.tangram.geometry.relations import RELATIONS
from agent.games.tangram.llm_player.schema import Move

SalvageKind = Literal[
    "field_dropped",      # a field of the wrong type or an unknown name: left out
    "name_fixed",         # "red", "left of": read as Red, left_of
    "action_fixed",       # an unknown action read as "place"
    "second_half",        # relation2 without anchor2 (or the reverse): the second relation dropped
    "second_unusable",    # anchor2 not on the board, the piece itself or the first anchor: dropped
    "anchor_is_piece",    # the piece as its own anchor: that relation dropped
    "anchor_off_board",   # the anchor is not on the board: the second relation, or the coordinates
    "relation_half",      # a relation without its anchor (or the reverse): dropped
    "rotate_off_board",   # "rotate" a piece not on the board: placed by the answer's position
    "rotate_moves",       # "rotate" without a rotation but with a place: a placement
    "place_as_rotate",    # "place" a piece on the board with a rotation but no place: turned in place
    "coordinate_kept",    # one coordinate missing for a piece on the board: kept where it is on that axis
    "clamped",            # coordinates off the board: moved onto it (the repair then fits the piece)
]
ProblemKind = Literal[
    "not_json",           # no JSON object in the reply
    "unreadable",         # JSON, but not a move even after dropping bad fields
    "no_piece",           # place/rotate without a (known) piece
    "no_position",        # place without coordinates or a usable relation
    "anchor_off_board",   # the only position is a relation to a piece not on the board
    "rotate_off_board",   # rotate a piece that is not on the board, with nothing else to go by
    "rotate_without_rotation",
    "piece_kept",         # moves a piece the partner asked never to be moved (and the chat agreed)
]

_NULLABLE = tuple(name for name, f in Move.model_fields.items()
                  if name != "piece" and type(None) in get_args(f.annotation))
"""Fields a model may leave out or get wrong without losing the move: they become null."""
_NAMES = ("piece", "anchor", "anchor2")
_RELATION_FIELDS = ("relation", "relation2")
_PIECE_BY_KEY = {name.lower(): name for name in PIECE_NAMES}
_RELATION_BY_KEY = {re.sub(r"[^a-z]", "", r): r for r in RELATIONS}
MAX_PASSES = 4
"""Validation rounds: each drops or fixes the fields the last one refused."""


@dataclass(frozen=True, slots=True)
class Salvage:
    kind: SalvageKind
    said: str
    """What the model's answer said, in its own terms ("Red right_of Cream")."""
    played: str
    """What is played instead ("Red at (40, 12)")."""
    why: str


@dataclass(frozen=True, slots=True)
class Problem:
    """Why nothing can be played from an answer, with the facts the model got wrong."""

    kind: ProblemKind
    detail: str
    """One line for logs and the transcript."""
    piece: str | None = None
    """The piece the answer named, if any."""
    missing: tuple[str, ...] = ()
    """Pieces the answer needs on the board that are not there."""


@dataclass(frozen=True, slots=True)
class Salvaged:
    move: Move | None
    """The move to play (a pass included), or None when nothing usable is left."""
    salvages: tuple[Salvage, ...] = ()
    problem: Problem | None = None
    candidate: str | None = None
    """The offered candidate the answer named: it is played exactly as offered, and ``move`` then
    carries only the answer's chat and reasoning."""


def salvage_answer(data: Any, on_board: Mapping[str, tuple[float, float]],
                   offered: tuple[str, ...] | list[str] = (), kept: Mapping[str, str] | None = None,
                   offered_pieces: Mapping[str, str] | None = None) -> Salvaged:
    """The playable move in the model's JSON ``data`` on a board holding ``on_board`` (each piece's
    reported position, board units, as the prompt showed it), ``offered`` the candidate letters the
    prompt offered.

    A candidate letter among ``offered`` wins over everything else in the answer (the other fields
    may even be invalid); a letter that was not offered is dropped with a note and the answer's own
    move is read. A pass the model chose is returned as it is: only a move it wanted and could not
    make gets salvaged, and only a move nothing can be made of becomes a :class:`Problem`.

    ``kept`` maps each piece on the board the partner asked never to be moved to the constraint
    ("never move the partner's pieces"): a move of one, by a candidate letter or by the answer's own
    fields, is refused (``piece_kept``), never salvaged into another move; ``offered_pieces`` says
    which piece each offered letter moves.
    """
    kept = kept or {}
    pieces_of = offered_pieces or {}
    if not isinstance(data, Mapping):
        return Salvaged(None, problem=Problem("not_json", "the reply holds no JSON object"))
    notes: list[Salvage] = []
    data = dict(data)
    if "candidate" in data:
        letter = data.pop("candidate")
        named = letter.strip().upper() if isinstance(letter, str) else None
        if named is not None and named in offered and pieces_of.get(named) in kept:
            piece = pieces_of[named]
            return Salvaged(None, tuple(notes), _kept_problem(kept[piece], piece))
        if named is not None and named in offered:
            texts = {k: data[k] if isinstance(data.get(k), str) else "" for k in ("chat", "reasoning")}
            return Salvaged(Move.model_validate({**dict.fromkeys(_NULLABLE), "piece": None, "action": "place",
                                                 **texts, "candidate": named}), candidate=named)
        if letter is not None:
            notes.append(Salvage("field_dropped", f"candidate {str(letter)[:20]!r}", "the answer's own move",
                                 f"that candidate was not offered (offered: {', '.join(offered) or 'none'})"))
    move = _validate(data, notes)
    if move is None:
        return Salvaged(None, tuple(notes), Problem("unreadable", "the JSON is not a move in the schema"))
    if move.action == "pass":
        return Salvaged(move, tuple(notes))
    if move.piece is not None and move.piece in kept:  # on the board, or left in the drawer for the partner
        return Salvaged(None, tuple(notes), _kept_problem(kept[move.piece], move.piece))
    fixed, problem = _usable(move, on_board, notes)
    return Salvaged(fixed, tuple(notes) if fixed is not None else (), problem)


def _kept_problem(constraint: str, piece: str) -> Problem:
    return Problem("piece_kept", f"it moves {piece}, against the partner's wish: {constraint}", piece)


# ---------------------------------------------------------------------- types and names


def _validate(data: dict[str, Any], notes: list[Salvage]) -> Move | None:
    """The answer as a :class:`Move`, dropping or fixing what does not validate; None if it cannot be."""
    filled = {"piece": None, **dict.fromkeys(_NULLABLE), "chat": "", "reasoning": "", **data}
    if isinstance(filled.get("action"), str):
        filled["action"] = filled["action"].strip().lower()
    for key in ("chat", "reasoning"):
        if filled.get(key) is None:
            filled[key] = ""
        elif not isinstance(filled[key], str):
            filled[key] = str(filled[key])[:500]
    _fix_names(filled, notes)
    for _ in range(MAX_PASSES):
        try:
            return Move.model_validate(filled)
        except ValidationError as exc:
            fields = {str(err["loc"][0]) for err in exc.errors() if err["loc"]}
            fixed = False
            for name in sorted(fields):
                if name == "action" and filled.get("piece") is not None:
                    notes.append(Salvage("action_fixed", f"action {_short(filled.get('action'))}",
                                         "action place", "the action is not place, rotate or pass"))
                    filled["action"] = "place"
                    fixed = True
                elif name in _NULLABLE or name == "piece" or name not in Move.model_fields:
                    if filled.get(name) is not None:
                        notes.append(Salvage("field_dropped", f"{name} {_short(filled.get(name))}", f"no {name}",
                                             f"{name} is not a valid value"))
                    filled[name] = None
                    fixed = True
            if not fixed:
                return None
    return None


def _fix_names(filled: dict[str, Any], notes: list[Salvage]) -> None:
    """Case and spacing slips in piece and relation names ("red", "Left of")."""
    for key in _NAMES:
        value = filled.get(key)
        if isinstance(value, str) and value not in PIECE_NAMES:
            known = _PIECE_BY_KEY.get(value.strip().lower())
            if known is not None:
                notes.append(Salvage("name_fixed", f"{key} {value!r}", f"{key} {known}", "a piece name misspelt"))
                filled[key] = known
    for key in _RELATION_FIELDS:
        value = filled.get(key)
        if isinstance(value, str) and value not in RELATIONS:
            known = _RELATION_BY_KEY.get(re.sub(r"[^a-z]", "", value.lower()))
            if known is not None:
                notes.append(Salvage("name_fixed", f"{key} {value!r}", f"{key} {known}", "a relation name misspelt"))
                filled[key] = known


# ---------------------------------------------------------------------- the move's parts


Board = Mapping[str, tuple[float, float]]


def _usable(move: Move, board: Board, notes: list[Salvage]) -> tuple[Move | None, Problem | None]:
    piece = move.piece
    if piece is None:
        return None, Problem("no_piece", f"{move.action} without a piece")
    if move.action == "rotate":
        return _rotate(move, board, notes)
    named = move.relation is not None or move.anchor is not None
    move = _second_relation(move, board, notes)
    move, missing = _first_relation(move, board, notes)
    if move.relation is not None:
        return move, None
    if move.x is not None and move.y is not None:
        return _clamp(move, notes), None
    if (move.x is None) != (move.y is None) and piece in board:
        here = board[piece]
        x = move.x if move.x is not None else here[0]
        y = move.y if move.y is not None else here[1]
        notes.append(Salvage("coordinate_kept", f"{piece} at x={_num(move.x)}, y={_num(move.y)}",
                             f"{piece} at ({_num(x)}, {_num(y)})",
                             "one coordinate was missing; the piece stays where it is along that axis"))
        return _clamp(move.model_copy(update={"x": x, "y": y}), notes), None
    if not named and piece in board and move.rotation is not None:
        notes.append(Salvage("place_as_rotate", f"place {piece} at rotation {move.rotation:g}, no place given",
                             f"turn {piece} to {move.rotation:g} where it stands",
                             "the answer gave a rotation but no place for a piece already on the board"))
        return move.model_copy(update={"action": "rotate"}), None
    if missing:
        return None, Problem("anchor_off_board", f"{', '.join(missing)} not on the board", piece, missing)
    return None, Problem("no_position", f"place {piece} without coordinates or a usable relation", piece)


def _rotate(move: Move, board: Board, notes: list[Salvage]) -> tuple[Move | None, Problem | None]:
    piece = move.piece
    assert piece is not None
    has_place = (move.x is not None and move.y is not None) or move.relation is not None \
        or move.relation2 is not None
    if piece in board and move.rotation is not None:
        return move, None
    if piece not in board:
        if not has_place:
            return None, Problem("rotate_off_board", f"rotate {piece}: it is not on the board", piece, (piece,))
        notes.append(Salvage("rotate_off_board", f"rotate {piece}", f"place {piece} by the answer's position",
                             f"{piece} is not on the board, so it cannot turn where it stands"))
    elif not has_place:
        return None, Problem("rotate_without_rotation", f"rotate {piece} without a rotation", piece)
    else:
        notes.append(Salvage("rotate_moves", f"rotate {piece} without a rotation", f"move {piece}",
                             "no rotation was given, but a place was"))
    fixed, problem = _usable(move.model_copy(update={"action": "place"}), board, notes)
    if problem is not None and piece not in board and problem.kind in ("no_position", "anchor_off_board"):
        problem = Problem(problem.kind, f"rotate {piece}: it is not on the board; {problem.detail}", piece,
                          (piece, *problem.missing))
    return fixed, problem


def _second_relation(move: Move, board: Board, notes: list[Salvage]) -> Move:
    if move.relation2 is None and move.anchor2 is None:
        return move
    said = f"{move.relation2 or '(no relation2)'} {move.anchor2 or '(no anchor2)'}"
    if move.relation2 is None or move.anchor2 is None:
        notes.append(Salvage("second_half", said, "the first relation alone",
                             "relation2 and anchor2 only work together"))
        return move.model_copy(update={"relation2": None, "anchor2": None})
    why = None
    if move.anchor2 == move.piece:
        why = f"{move.anchor2} cannot be its own anchor"
    elif move.anchor2 == move.anchor:
        why = "the second anchor is the first one again"
    elif move.anchor2 not in board:
        why = f"{move.anchor2} is not on the board"
    if why is None:
        return move
    # A relation that is unusable as the second one may not matter: the first one or the
    # coordinates still place the piece. Only a first relation that fails too needs it.
    notes.append(Salvage("second_unusable", said, "the first relation alone", why))
    return move.model_copy(update={"relation2": None, "anchor2": None})


def _first_relation(move: Move, board: Board, notes: list[Salvage]) -> tuple[Move, tuple[str, ...]]:
    """The move with a usable first relation, or without one; and the anchors it named that are
    not on the board when nothing stood in for them."""
    if move.relation is None and move.anchor is None:
        return move, ()
    said = f"{move.piece} {move.relation or '(no relation)'} {move.anchor or '(no anchor)'}"
    kind: SalvageKind = "relation_half"
    why = "a relation needs both its name and its anchor"
    if move.relation is None or move.anchor is None:
        pass
    elif move.anchor == move.piece:
        kind, why = "anchor_is_piece", f"{move.piece} cannot be its own anchor"
    elif move.anchor not in board:
        kind, why = "anchor_off_board", f"{move.anchor} is not on the board"
    else:
        return move, ()
    coords = move.x is not None and move.y is not None
    if not coords and move.relation2 is not None and move.anchor2 is not None:
        # A usable second relation (checked before) stands in for the first.
        notes.append(Salvage(kind, said, f"{move.piece} {move.relation2} {move.anchor2}", why))
        return move.model_copy(update={"relation": move.relation2, "anchor": move.anchor2,
                                       "relation2": None, "anchor2": None}), ()
    dropped = move.model_copy(update={"relation": None, "anchor": None, "relation2": None, "anchor2": None})
    if coords:
        notes.append(Salvage(kind, said,
                             f"{move.piece} at ({_num(move.x)}, {_num(move.y)}), the answer's own coordinates", why))
        return dropped, ()
    missing = (move.anchor,) if kind == "anchor_off_board" and move.anchor is not None else ()
    return dropped, missing


def _clamp(move: Move, notes: list[Salvage]) -> Move:
    x, y = move.x, move.y
    cx = None if x is None else min(BOARD_UNITS, max(0.0, x))
    cy = None if y is None else min(BOARD_UNITS, max(0.0, y))
    if cx == x and cy == y:
        return move
    notes.append(Salvage("clamped", f"{move.piece} at ({_num(x)}, {_num(y)})",
                         f"{move.piece} at ({_num(cx)}, {_num(cy)})",
                         f"the board runs from 0 to {BOARD_UNITS:g} on both axes"))
    return move.model_copy(update={"x": cx, "y": cy})


def _num(v: float | None) -> str:
    if v is None:
        return "null"
    return f"{v:.1f}".rstrip("0").rstrip(".") if math.isfinite(v) else str(v)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"
