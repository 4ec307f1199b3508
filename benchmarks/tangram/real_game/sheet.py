"""``--chat set``: one judging-sheet row per item, as the simulator's reply benchmark writes it
(``benchmarks/tangram/bench_replies.py``: keys id, lang, objective, stage, moving, before, board,
agent_last_said, move_under_way, say, reply, right_when, ms), from the real game's event log, and the
run's summary.

The board is the state the game sent with the line's ``chatRequest``, read by the project's planner
in ``bench_replies.describe``'s words (each piece, who moved it last, the part of the figure it stands
for when in place; then the drawer). Who moved a piece last comes from the log: the scripted human's
drags the game accepted, and the agent's plays, less a play the game undid (a second piece played in
one turn puts the first back; the game's apology at ``finish`` puts the last back).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agent.games.tangram.contract import board_of
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.offline.agent import OfflineAgent
from agent.games.tangram.planner.library import FigureLibrary
from agent.games.tangram.protocol import GameState
from benchmarks.tangram.bench_replies import describe
from benchmarks.tangram.real_game.chat_set import SetItem
from benchmarks.tangram.real_game.console import PUT_BACK_LINE
from benchmarks.tangram.real_game.events import Event


def movers_at(events: list[Event], upto: int, ws: int) -> dict[str, str]:
    """Who moved each piece last on socket ``ws`` before event ``upto``: "agent" or "partner"."""
    current = 0
    movers: dict[str, str] = {}
    at_turn_start: dict[str, str] = {}
    played = ""

    def undo(piece: str) -> None:
        if piece in at_turn_start:
            movers[piece] = at_turn_start[piece]
        else:
            movers.pop(piece, None)

    for event in events[:upto]:
        if event.src == "runner" and event.type == "socket":
            current = int(event.msg.get("ws") or 0)
            continue
        if event.src in ("game", "agent") and event.ws:
            current = event.ws
        if current != ws:
            continue
        if event.src == "human" and event.type == "drag" and event.msg.get("overlaps") == []:
            movers[str(event.msg.get("shape"))] = "partner"
        elif event.src == "game" and event.type == "playRequest":
            at_turn_start, played = dict(movers), ""
        elif event.src == "agent" and event.type == "play":
            shape = str(event.msg.get("shape"))
            if played and played != shape:
                undo(played)  # the game puts the turn's first piece back when a second one is played
            movers[shape], played = "agent", shape
        elif event.src == "console" and PUT_BACK_LINE in event.text and played:
            undo(played)
            played = ""
    return movers


def planner_for(objective: str, board: Mapping[str, Pose], movers: Mapping[str, str],
                library: FigureLibrary) -> OfflineAgent:
    """A fresh planner of ``objective`` that has seen ``board``: what reads a board in figure parts."""
    planner = OfflineAgent(library)
    planner.sync(objective, board, movers)
    return planner


def poses(state: Any) -> dict[str, Pose]:
    """The on-board pieces of a game state as exact poses (node origins)."""
    return board_of(GameState.from_raw(state if isinstance(state, dict) else None))


def board_lines(objective: str, state: Any, movers: Mapping[str, str], library: FigureLibrary) -> list[str]:
    """The board of ``state`` as the judge reads it (``bench_replies.describe``'s words)."""
    board = poses(state)
    return describe(planner_for(objective, board, movers, library), board, dict(movers))


def under_way(objective: str, events: list[Event], turn: int, line: int, ws: int, library: FigureLibrary) -> str:
    """The agent's move under way when the line (event ``line``) arrived in the AI's turn opened by
    the playRequest at event ``turn``: its first play, as ``bench_replies.under_way`` words it ("" when
    the turn played nothing)."""
    play = next((i for i in range(turn + 1, len(events)) if events[i].src == "agent" and events[i].ws == ws
                 and events[i].type in ("play", "finish", "error")), None)
    if play is None or events[play].type != "play":
        return ""
    msg = events[play].msg
    position = msg.get("position")
    shape = str(msg.get("shape"))
    try:
        x, y = position if isinstance(position, list) else ("", "")
        pose = Pose(shape, float(x), float(y), float(msg.get("rotation", 0.0)))
    except (TypeError, ValueError):  # a play the game could not read either
        return f"{shape}: the agent is playing it; the move has not landed yet"
    board = poses(events[turn].msg.get("state"))
    planner = planner_for(objective, board, movers_at(events, turn, ws), library)
    fit = planner.fit({**board, shape: pose}, commit=False)
    part = planner.figure.parts[fit.slot_of[shape]] if shape in fit.matched else "no place of the figure"
    where = "moving it" if shape in board else "placing it from the drawer"
    landed = any(e.src == "game" and e.type == "playFeedback" and e.ws == ws for e in events[play:line])
    return f"{shape}: the agent is {where} as the {part}; " + \
        ("the move had landed" if landed else "the move has not landed yet")


def sheet_row(item: SetItem, *, objective: str, board: list[str], last_said: str, move_under_way: str,
              reply: str | None, ms: float | None, failure: str | None = None) -> dict[str, Any]:
    """One row of the judging sheet; ``objective`` is the one played (``objective_drawn`` when the
    game never drew the item's own)."""
    row: dict[str, Any] = {
        "id": item.id, "lang": item.lang, "objective": objective, "stage": item.stage, "moving": item.moving,
        "before": list(item.before), "board": board, "agent_last_said": last_said,
        "move_under_way": move_under_way, "say": item.say, "reply": reply, "right_when": item.right_when, "ms": ms}
    if objective != item.objective:
        row["objective_drawn"] = True
        row["objective_wanted"] = item.objective
    if failure is not None:
        row["failure"] = failure
    return row


@dataclass
class ItemRun:
    """One item as played: its sheet row and what it took."""

    item: SetItem
    row: dict[str, Any] = field(default_factory=dict)
    loads: int = 0
    """Page loads until the item's objective was drawn (or the last tried)."""
    asked: int = 0
    """Loads whose objective was learnt from a chat line kept from the agent."""
    seconds: float = 0.0
    rounds: int = 0
    """Rounds played before the line."""

    @property
    def replied(self) -> bool:
        return isinstance(self.row.get("reply"), str)


def item_line(run: ItemRun, language: Callable[[str], str]) -> str:
    row = run.row
    reply = row.get("reply")
    said = "-" if reply is None else language(reply)
    drawn = " (DRAWN)" if row.get("objective_drawn") else ""
    ms = "-" if row.get("ms") is None else f"{row['ms']:.0f}"
    head = (f"{run.item.id:<12} {run.item.lang} {str(row.get('objective', ''))[:9]:<9}{drawn} {run.item.stage:<5} "
            f"{'moving' if run.item.moving else '':<6} loads {run.loads:>2} rounds {run.rounds:>2} "
            f"{run.seconds:6.1f} s reply {ms:>6} ms [{said}]")
    if reply is None:
        return f"{head} NO REPLY: {row.get('failure', '')}"
    return f"{head} {reply!r}"


def set_summary(runs: list[ItemRun], language: Callable[[str], str]) -> dict[str, Any]:
    replied = [r for r in runs if r.replied]
    seconds = [r.seconds for r in runs]
    return {
        "items": len(runs),
        "replies": len(replied),
        "objective_mismatches": sum(bool(r.row.get("objective_drawn")) for r in runs),
        "replies_in_language": sum(language(str(r.row["reply"])) == r.item.lang for r in replied),
        "failures": {r.item.id: r.row["failure"] for r in runs if "failure" in r.row},
        "loads": sum(r.loads for r in runs),
        "objectives_asked": sum(r.asked for r in runs),
        "item_s": {"median": round(statistics.median(seconds), 1) if seconds else None,
                   "max": round(max(seconds), 1) if seconds else None,
                   "total": round(sum(seconds), 1)},
    }


def set_lines(runs: list[ItemRun], summary: dict[str, Any], language: Callable[[str], str], sheet: str) -> list[str]:
    s = summary
    return [*(item_line(r, language) for r in runs),
            f"chat set: {s['items']} items, {s['replies']} replies received, {s['objective_mismatches']} played on "
            f"another objective (never drawn in the loads tried), {s['replies_in_language']} replies in the line's "
            f"language (py3langid); {s['loads']} page loads ({s['objectives_asked']} objectives learnt from a "
            f"held-back chat line); seconds per item {s['item_s']}",
            f"judging sheet: {sheet}"]
