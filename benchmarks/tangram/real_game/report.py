"""The printed table (one row per AI turn) and the summary object."""

from __future__ import annotations

import json
import statistics

from benchmarks.tangram.real_game.console import count_errors, count_warnings
from benchmarks.tangram.real_game.events import Event
from benchmarks.tangram.real_game.tally import Summary, Tally, TurnRow

HEADER = (f"{'turn':>4} {'game':>4} {'objective':<9} {'ended':<7} {'secs':>6} {'plays':>5} "
          f"{'play->fb s':<15} {'landing':>7} {'put back':>8} {'chats':>5} {'asked':>5} {'replies':>7}")


def _spread(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"n": 0, "median": None, "max": None}
    return {"n": len(values), "median": round(statistics.median(values), 2), "max": round(max(values), 2)}


def row_line(row: TurnRow) -> str:
    secs = "-" if row.seconds is None else f"{row.seconds:.1f}"
    lat = ",".join(f"{x:.1f}" for x in row.latencies) or "-"
    return (f"{row.turn:>4} {row.game:>4} {row.objective[:9]:<9} {row.ended:<7} {secs:>6} {row.plays:>5} "
            f"{lat[:15]:<15} {'YES' if row.finish_while_landing else 'no':>7} "
            f"{(row.put_back_by or 'YES') if row.put_back else 'no':>8} {row.chats:>5} {row.chat_requests:>5} "
            f"{row.replies:>7}")


def summarize(result: Tally, events: list[Event]) -> Summary:
    rows = result.rows
    console = [e.text for e in events if e.src == "console"]
    frames = {"game": sum(e.src == "game" for e in events), "agent": sum(e.src == "agent" for e in events)}
    largest = {src: max((e.size for e in events if e.src == src), default=0) for src in ("game", "agent")}
    objectives = sorted({r.objective for r in rows if r.objective})
    return Summary(
        turns=len(rows),
        finished=sum(r.ended == "finish" for r in rows),
        finish_while_landing=sum(r.finish_while_landing for r in rows),
        put_back=sum(r.put_back for r in rows),
        gdscript_errors=count_errors(console),
        chats=sum(e.src == "agent" and e.type == "chat" for e in events),
        replies=sum(r.replies for r in rows) + result.replies_between,
        chat_requests=sum(r.chat_requests for r in rows) + result.chat_requests_between,
        errors_sent=sum(r.ended == "error" for r in rows),
        interrupted=sum(r.ended in ("reload", "closed") for r in rows),
        unfinished=sum(r.ended == "open" for r in rows),
        games=len({r.game for r in rows}),
        objectives=objectives,
        gdscript_warnings=count_warnings(console),
        play_feedback_s=_spread([x for r in rows for x in r.latencies]),
        turn_s=_spread([r.seconds for r in rows if r.seconds is not None and r.ended == "finish"]),
        frames=frames,
        largest_frame_bytes=largest,
    )


def table(result: Tally) -> list[str]:
    return [HEADER, *(row_line(r) for r in result.rows)]


def summary_lines(summary: Summary) -> list[str]:
    s = summary
    return [
        f"AI turns {s.turns}: ended by finish {s.finished}, by error {s.errors_sent}, cut by reload/close "
        f"{s.interrupted}, never ended {s.unfinished}",
        f"finish while a play was landing: {s.finish_while_landing}; plays the game put back: {s.put_back}",
        f"GDScript/engine errors in the console: {s.gdscript_errors} (warnings {s.gdscript_warnings})",
        f"chat: {s.chat_requests} lines typed, {s.replies} answered; {s.chats} agent lines shown",
        f"play->playFeedback s: {s.play_feedback_s}; turn s (playRequest->finish): {s.turn_s}",
        f"games {s.games}, objectives {', '.join(s.objectives) or '-'}; frames {s.frames}, "
        f"largest bytes {s.largest_frame_bytes}",
    ]


def decision_sources(lines: list[str]) -> dict[str, int]:
    """How the agent's decisions were made (``llm``, ``planner``, ``planner-fallback``...), counted
    from its transcript lines (records of kind ``decision``)."""
    counts: dict[str, int] = {}
    for line in lines:
        if '"decision"' not in line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("kind") == "decision":
            source = str(record.get("source") or "unknown")
            counts[source] = counts.get(source, 0) + 1
    return dict(sorted(counts.items()))
