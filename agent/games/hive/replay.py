"""A replay report from an arena log (ours or the real arena's): one HTML page, stepped or animated.

    python -m agent.games.hive.replay match.log --out replay.html

The page holds the first grid and, per turn, only the cells that changed, so a 4,000-turn match
stays a few hundred kilobytes; it needs no network and no other file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from agent.games.hive.protocol import MatchLog, ProtocolError, parse_log

TEMPLATE = "replay_page.html.j2"
MAX_LOG_BYTES = 64 * 1024 * 1024


def frames(match: MatchLog) -> dict[str, Any]:
    """The page's data: first grid, per-turn changes, and per-turn (turn, player, bee, s0, s1, action, dir)."""
    if not match.turns:
        raise ProtocolError("the log has no turns to replay")
    first = match.turns[0].grid
    changes: list[list[list[int]]] = []
    previous = first
    for turn in match.turns[1:]:
        grid = turn.grid
        changes.append([[i, int(grid[i])] for i in range(len(grid)) if grid[i] != previous[i]])
        previous = grid
    turns = [[t.turn, t.player, t.bee, t.score0, t.score1, t.action, t.direction] for t in match.turns]
    return {"first": first, "changes": changes, "turns": turns}


def render_report(match: MatchLog, title: str) -> str:
    env = Environment(loader=FileSystemLoader(str(Path(__file__).parent)), undefined=StrictUndefined,
                      autoescape=select_autoescape(default=True, default_for_string=True))
    forfeited = f"player {match.forfeit} forfeited" if match.forfeit is not None else "unfinished"
    result = match.result_line or forfeited
    return env.get_template(TEMPLATE).render(title=title, names=match.names, result=result, data=frames(match))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m agent.games.hive.replay",
                                description="HTML replay of a Hive Arena log.")
    p.add_argument("log", type=Path, help="arena log file")
    p.add_argument("--out", type=Path, help="HTML file to write (default: the log's name with .html)")
    args = p.parse_args(argv)
    try:
        if args.log.stat().st_size > MAX_LOG_BYTES:
            raise ProtocolError(f"log is larger than {MAX_LOG_BYTES // (1024 * 1024)} MB")
        match = parse_log(args.log.read_text(encoding="utf-8", errors="replace"))
        page = render_report(match, args.log.name)
    except (OSError, ProtocolError) as exc:
        print(f"error: {args.log}: {exc}", file=sys.stderr)
        return 2
    out = args.out or args.log.with_suffix(".html")
    out.write_text(page, encoding="utf-8")
    print(f"wrote {out} ({len(match.turns)} turns, {len(page) // 1024} KB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
