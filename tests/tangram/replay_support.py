"""Shared by the replay tests: a real simulated session's transcript, and what its replay must show,
worked out from the records on their own (not through the replay's code)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from agent.games.tangram.config import Config
from agent.games.tangram.geometry.frames import Pose, pose_from_marker, world_to_board
from agent.games.tangram.geometry.pieces import PIECES
from agent.games.tangram.geometry.screen import BOARD_CROP, DRAWER_CROP, world_to_crop
from agent.games.tangram.sim.runner import RunOptions, run_in_process

TAGS = {"participant": "P07", "condition": "explain"}


def simulated_transcript(folder: Path, turns: int = 6, seed: int = 5, human: str = "chatty") -> Path:
    """Play one game against the offline planner over a real socket; the agent's transcript path."""
    config = Config.model_validate({"player": "planner", "tags": TAGS,
                                    "transcripts": {"dir": str(folder)}})
    options = RunOptions(games=1, turns=turns, human=human, seed=seed, tween=0.0, deadline=20)
    asyncio.run(run_in_process(config, options, folder))
    paths = sorted(folder.glob("*.jsonl"))
    assert len(paths) == 1, paths
    return paths[0]


def read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _points(pose: Pose, crop: tuple[int, int, int, int]) -> list[tuple[float, float]]:
    return [world_to_crop(p, crop) for p in pose.outline_px()]


def board_points(state: dict[str, Any]) -> dict[str, list[tuple[float, float]]]:
    """Each on-board piece's outline in board-crop pixels, from the state's marker and rotation."""
    return {name: _points(pose_from_marker(name, p["position"][0], p["position"][1], p["rotation"]), BOARD_CROP)
            for name, p in state["on_board"].items()}


def drawer_points(state: dict[str, Any]) -> dict[str, list[tuple[float, float]]]:
    """Each off-board piece's outline in drawer-crop pixels, at its drawer place, turned as reported."""
    out = {}
    for name, p in state["off_board"].items():
        x, y = world_to_board(*PIECES[name].start_origin)
        out[name] = _points(Pose(name, x, y, p["rotation"]), DRAWER_CROP)
    return out


def expected_steps(records: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any] | None]]:
    """(anchor, state) of every step the replay must show, in order: the start (None: all in the
    drawer), then per AI turn k the human's move (the state of playRequest k) and the AI's turn (the
    state of turn k's last playFeedback, or the playRequest's when it made no play)."""
    steps: list[tuple[str, dict[str, Any] | None]] = [("start", None)]
    last: dict[int, dict[str, Any]] = {}
    order: list[int] = []
    for r in records:
        if r["kind"] != "frame_in" or "turn" not in r:
            continue
        if r["type"] == "playRequest":
            order.append(r["turn"])
            last[r["turn"]] = r["state"]
            steps.append((f"human-{r['turn']}", r["state"]))
        elif r["type"] == "playFeedback":
            last[r["turn"]] = r["state"]
    out = []
    for anchor, state in steps:
        out.append((anchor, state))
        if anchor.startswith("human-"):
            turn = int(anchor.split("-")[1])
            out.append((f"ai-{turn}", last[turn]))
    return out


def chat_lines(records: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(who, text) of every chat line in the order the transcript has them."""
    out = []
    for r in records:
        if r["kind"] == "frame_in" and r.get("type") == "chatRequest" and r.get("message"):
            out.append(("human", r["message"]))
        elif r["kind"] == "frame_out" and r["frame"].get("type") == "chat":
            out.append(("agent", r["frame"]["message"]))
    return out


def parse_points(text: str) -> list[tuple[float, float]]:
    return [(float(x), float(y)) for x, y in (pair.split(",") for pair in text.split())]


def close(a: list[tuple[float, float]], b: list[tuple[float, float]], tol: float = 0.011) -> bool:
    if len(a) != len(b):
        return False
    return all(abs(p[0] - q[0]) <= tol and abs(p[1] - q[1]) <= tol for p, q in zip(a, b, strict=True))
