"""The arena's wire format: state lines in, command lines out, and the match log. No I/O.

Every line is checked strictly (field count, digits only, ranges, the turn/player/bee relation,
the active bee at the centre of its view) so that a damaged or foreign line is reported with a
specific reason instead of being half-understood.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from agent.games.hive.rules import (
    BEES,
    CELLS,
    COLS,
    PLAYERS,
    ROWS,
    VIEW_CELLS,
    VIEW_DISTANCE,
    VIEW_SIDE,
    Action,
    Cell,
    is_bee,
    owner,
)

MAX_LINE = 200
"""Longest line either side may send, newline included."""
MAX_TURN = 10_000_000
"""Far beyond any real match (a timeout ends it after 1000 pointless turns); bounds the parser."""
GAMEOVER = "gameover"
SAFE_COMMAND: tuple[int, int] = (int(Action.MOVE), 0)
"""Sent when a state line cannot be understood: at worst one bee steps north or bumps into something.
Moving never drops a flower, builds or destroys anything."""

_STATE = re.compile(rf"(\d{{1,8}}),(\d),(\d),(\d{{1,2}}),(\d{{1,2}}),([0-9]{{{VIEW_CELLS}}})")
_COMMAND = re.compile(r"\s*([+-]?\d{1,9}),\s*([+-]?\d{1,9})")


class ProtocolError(ValueError):
    """A line that does not follow the protocol; the message says what is wrong."""


class BeeView(BaseModel):
    """One state line: the active bee and the 7 x 7 cells around it, row by row."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    turn: int
    player: int
    bee: int
    row: int
    col: int
    cells: bytes
    """49 cell values (not digits), row by row; index 24 is the bee itself."""

    def at(self, drow: int, dcol: int) -> int:
        """The cell at an offset from the bee (each offset within the view distance)."""
        return self.cells[(drow + VIEW_DISTANCE) * VIEW_SIDE + dcol + VIEW_DISTANCE]

    @property
    def me(self) -> int:
        return self.cells[VIEW_CELLS // 2]

    @property
    def carrying(self) -> bool:
        return self.me in (Cell.BEE_0_WITH_FLOWER, Cell.BEE_1_WITH_FLOWER)


def _describe(line: str) -> str:
    shown = line if len(line) <= 80 else line[:77] + "..."
    return repr(shown)


def parse_state(line: str) -> BeeView:
    """Parse one state line (without its newline); raises ProtocolError naming the fault."""
    if len(line) + 1 > MAX_LINE:
        raise ProtocolError(f"state line of {len(line) + 1} bytes exceeds {MAX_LINE}")
    match = _STATE.fullmatch(line)
    if match is None:
        fields = line.split(",")
        if len(fields) != 6:
            raise ProtocolError(f"state line needs 6 comma-separated fields, got {len(fields)}: {_describe(line)}")
        if len(fields[5]) != VIEW_CELLS:
            raise ProtocolError(f"view needs {VIEW_CELLS} cells, got {len(fields[5])}: {_describe(line)}")
        raise ProtocolError(f"state line has a non-numeric or oversized field: {_describe(line)}")
    turn, player, bee, row, col = (int(match.group(i)) for i in range(1, 6))
    if turn > MAX_TURN:
        raise ProtocolError(f"turn {turn} is beyond {MAX_TURN}")
    if player >= PLAYERS or bee >= BEES:
        raise ProtocolError(f"player {player} / bee {bee} out of range")
    if player != turn % PLAYERS or bee != (turn // PLAYERS) % BEES:
        raise ProtocolError(f"turn {turn} belongs to player {turn % PLAYERS} bee {(turn // PLAYERS) % BEES}, "
                            f"not player {player} bee {bee}")
    if row >= ROWS or col >= COLS:
        raise ProtocolError(f"position ({row}, {col}) is outside the {ROWS} x {COLS} arena")
    cells = bytes(ord(ch) - 48 for ch in match.group(6))
    centre = cells[VIEW_CELLS // 2]
    if not is_bee(centre) or owner(centre) != player:
        raise ProtocolError(f"the centre of the view is cell {centre}, not a bee of player {player}")
    for index, cell in enumerate(cells):
        r = row + index // VIEW_SIDE - VIEW_DISTANCE
        c = col + index % VIEW_SIDE - VIEW_DISTANCE
        outside = not (0 <= r < ROWS and 0 <= c < COLS)
        if outside != (cell == Cell.OUTSIDE):
            raise ProtocolError(f"view cell ({r}, {c}) is {cell}, which contradicts the arena's edge")
    return BeeView.model_construct(turn=turn, player=player, bee=bee, row=row, col=col, cells=cells)


def format_state(turn: int, player: int, bee: int, row: int, col: int, digits: str) -> bytes:
    return f"{turn},{player},{bee},{row},{col},{digits}\n".encode("ascii")


def format_command(action: int, direction: int) -> bytes:
    """One complete answer, to be sent in a single write."""
    return f"{int(action)},{int(direction)}\n".encode("ascii")


def parse_command(data: bytes) -> tuple[int, int]:
    """What the arena accepts from one read: a newline-terminated ``action,direction`` line.

    Like the real arena: the newline must be the last byte of that single read, the two
    leading integers are taken (anything after them on the line is ignored), and each must be
    in range. Raises ProtocolError (a forfeit) otherwise.
    """
    if not data:
        raise ProtocolError("no answer (connection closed)")
    if len(data) > MAX_LINE:
        raise ProtocolError(f"answer of {len(data)} bytes exceeds {MAX_LINE}")
    if not data.endswith(b"\n"):
        raise ProtocolError(f"answer {data[:40]!r} does not end with a newline in a single read")
    text = data[:-1].decode("ascii", errors="replace")
    match = _COMMAND.match(text)
    if match is None:
        raise ProtocolError(f"answer {text[:40]!r} does not start with 'action,direction'")
    action, direction = int(match.group(1)), int(match.group(2))
    if not (0 <= action <= 3 and 0 <= direction <= 7):
        raise ProtocolError(f"answer {action},{direction} is out of range (action 0-3, direction 0-7)")
    return action, direction


# ---- the match log ----------------------------------------------------------------------------

class LogTurn(BaseModel):
    """One logged turn: the arena before the command, and the command (-1,-1 on the final line)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    turn: int
    player: int
    bee: int
    score0: int
    score1: int
    grid: str
    action: int
    direction: int


class MatchLog(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    names: tuple[str, str]
    turns: list[LogTurn]
    winner: int | None
    """0 or 1, None on a draw (or an unfinished log)."""
    result_line: str
    forfeit: int | None = None
    """The player who timed out or answered badly, if any."""


_LOG_TURN = re.compile(rf"(\d+),([01]),(\d),(\d+),(\d+),([0-9]{{{CELLS}}}),(-?\d),(-?\d)")
_LOG_NAME = re.compile(r"# Player ([01]): (.*)")
_LOG_FORFEIT = re.compile(r"# Player ([01]) timeout.*")
_LOG_WINNER = re.compile(r"# Winner: player ([01]) \((.*)\)")
MAX_LOG_TURNS = 200_000


def log_turn_line(turn: int, player: int, bee: int, scores: list[int], grid: str, action: int, direction: int) -> str:
    return f"{turn},{player},{bee},{scores[0]},{scores[1]},{grid},{action},{direction}\n"


def parse_log(text: str) -> MatchLog:
    """Read an arena log (ours or the real arena's); raises ProtocolError on a foreign line."""
    names = ["?", "?"]
    turns: list[LogTurn] = []
    winner: int | None = None
    forfeit: int | None = None
    result = ""
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip("\r")
        if not line:
            continue
        if line.startswith("#"):
            if m := _LOG_NAME.fullmatch(line):
                names[int(m.group(1))] = m.group(2)
            elif m := _LOG_WINNER.fullmatch(line):
                winner = int(m.group(1))
                result = line[2:]
            elif line == "# Draw":
                result = "Draw"
            elif m := _LOG_FORFEIT.fullmatch(line):
                forfeit = int(m.group(1))
            continue
        m = _LOG_TURN.fullmatch(line)
        if m is None:
            raise ProtocolError(f"log line {number} is not a turn line: {_describe(line)}")
        if len(turns) >= MAX_LOG_TURNS:
            raise ProtocolError(f"log has more than {MAX_LOG_TURNS} turns")
        turns.append(LogTurn(turn=int(m.group(1)), player=int(m.group(2)), bee=int(m.group(3)),
                             score0=int(m.group(4)), score1=int(m.group(5)), grid=m.group(6),
                             action=int(m.group(7)), direction=int(m.group(8))))
    return MatchLog(names=(names[0], names[1]), turns=turns, winner=winner, result_line=result, forfeit=forfeit)
