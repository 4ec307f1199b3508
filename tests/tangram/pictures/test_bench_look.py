"""bench_look reads both capture formats and measures what it says: a simulator picture of a state
against itself is a perfect match, the light look is far off, and a dimmed capture's highlight is
read off the picture (so the calibrated render matches it)."""

from __future__ import annotations

import base64
import io
import json
from dataclasses import replace
from pathlib import Path

from PIL import Image

from agent.games.tangram.sim.simgame import SimGame, frame_text
from benchmarks.tangram.bench_look import load_captures, measure, redrawn_check, restored_check


def _runner_log(folder: Path, frames: list[dict[str, object]]) -> None:
    """Frames as the real-game runner records them: the frame without its pictures, saved beside."""
    (folder / "images").mkdir(parents=True)
    lines = []
    for i, frame in enumerate(frames):
        msg = json.loads(frame_text(frame))
        names = {}
        for key in ("board_img", "drawer_img"):
            name = f"images/{i:04d}-{key}.png"
            (folder / name).write_bytes(base64.b64decode(str(msg.pop(key))))
            names[key] = name
        lines.append(json.dumps({"t": i, "src": "game", "msg": msg, "images": names}))
    (folder / "events.jsonl").write_text("\n".join(lines) + "\n")


def test_a_runner_log_of_simulator_frames_matches_the_calibrated_look(tmp_path: Path) -> None:
    game = SimGame()
    game.place("Red", 30, 50, 0)
    assert game.human_move("Cream", 70, 40, 90)
    request = game.start_ai_turn()  # dimmed: every piece but Cream
    _runner_log(tmp_path / "run", [request])
    captures = load_captures(tmp_path)
    assert len(captures) == 1 and captures[0].name.endswith(":playRequest")
    seen: dict[str, list[int]] = {}
    result = measure(captures, seen)
    assert seen == {"playRequest": [1, 1, 0, 0]}
    for crop in ("board", "drawer"):
        after, before = result["game"][crop], result["light"][crop]
        assert after["piece"] < 1.0 and after["background"] < 1.0 and after["within16"] > 0.999, (crop, after)
        assert before["piece"] > 20 and before["within16"] < 0.9, (crop, before)
    check = restored_check(captures)
    assert check["pictures"] == 2 and check["dimmed"] == 0 and check["error_after"] < 1.0 < check["error_before"]
    drawn = redrawn_check(captures)
    assert drawn["pictures"] == 2 and drawn["within16_min"] > 0.98 and drawn["far64_max"] < 0.01, drawn
    # A picture that is not the state (the pieces moved away) is told apart.
    moved = [replace(c, state=c.state.model_copy(update={"on_board": {}})) for c in captures]
    assert redrawn_check(moved)["within16_min"] < 0.98


def test_a_screenshot_with_its_state_is_cut_where_the_game_cuts(tmp_path: Path) -> None:
    game = SimGame()
    board, drawer = (Image.open(io.BytesIO(base64.b64decode(b))) for b in game.images())
    shot = Image.new("RGB", (1920, 1080), (200, 200, 200))
    shot.paste(board, (880, 115))
    shot.paste(drawer, (1600, 425))
    shot.save(tmp_path / "start.png")
    (tmp_path / "start.state.json").write_text(json.dumps(game.state()))
    captures = load_captures(tmp_path)
    assert len(captures) == 1
    result = measure(captures)
    assert result["game"]["drawer"]["within16"] > 0.999 and result["game"]["board"]["pixels"] < 0.5
