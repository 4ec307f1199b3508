"""The replay report from a log: every turn's grid can be rebuilt from the page's data."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from agent.games.hive import replay
from agent.games.hive.protocol import log_turn_line, parse_log
from agent.games.hive.rules import apply_command, new_arena, turn_player_bee


def short_log(turns: int = 60) -> str:
    rng = random.Random(4)
    state = new_arena(rng)
    lines = ["# Player 0: <script>alert(1)</script>\n", "# Player 1: rnd\n"]
    for _ in range(turns):
        player, bee = turn_player_bee(state.turn)
        action, direction = rng.randrange(4), rng.randrange(8)
        lines.append(log_turn_line(state.turn, player, bee, state.scores, state.grid_digits(), action, direction))
        apply_command(state, action, direction, rng)
    player, bee = turn_player_bee(state.turn)
    lines.append(log_turn_line(state.turn, player, bee, state.scores, state.grid_digits(), -1, -1))
    lines.append("# Draw\n")
    return "".join(lines)


def test_frames_rebuild_every_grid() -> None:
    match = parse_log(short_log())
    data = replay.frames(match)
    grid = list(data["first"])
    for turn, changes in zip(match.turns[1:], data["changes"], strict=True):
        for index, value in changes:
            grid[index] = str(value)
        assert "".join(grid) == turn.grid
    assert len(data["turns"]) == len(match.turns)


def test_the_page_is_self_contained_and_escapes_names(tmp_path: Path) -> None:
    log = tmp_path / "m.log"
    log.write_text(short_log())
    out = tmp_path / "r.html"
    assert replay.main([str(log), "--out", str(out)]) == 0
    page = out.read_text()
    assert "<script>alert(1)</script>" not in page
    assert "http://" not in page and "https://" not in page
    payload = re.search(r"const DATA = (.*);\n", page)
    assert payload is not None
    data = json.loads(payload.group(1))
    assert len(data["turns"]) == 61


def test_a_bad_log_is_a_clear_error(tmp_path: Path, capsys) -> None:
    log = tmp_path / "bad.log"
    log.write_text("not a log\n")
    assert replay.main([str(log)]) == 2
    assert "line 1" in capsys.readouterr().err
    assert replay.main([str(tmp_path / "missing.log")]) == 2


