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
    state of turn k's last playFeedback, or the playRequest's when it made no play); and when the
    transcript ends during a human's move that no playRequest closed, that move (anchor ``human-s``,
    the state of the last chatRequest after the last AI turn ended; opened, on the board last seen, by
    any chat line either side sends after it, whose timing against the turn's end the test does not
    choose)."""
    steps: list[tuple[str, dict[str, Any] | None]] = [("start", None)]
    last: dict[int, dict[str, Any]] = {}
    ended: set[int] = set()
    pending: dict[str, Any] | None = None
    latest: dict[str, Any] | None = None
    for r in records:
        if r["kind"] == "turn_end":
            ended.add(r["turn"])
        if r["kind"] == "frame_out" and not isinstance(r.get("turn"), int) and last \
                and all(k in ended for k in last) and pending is None:
            pending = latest  # a line the agent sends between AI turns (a chat reply) opens the human's move
        if r["kind"] != "frame_in":
            continue
        if isinstance(r.get("state"), dict):
            latest = r["state"]
        turn = r.get("turn")
        if r["type"] == "playRequest" and turn is not None:
            pending = None
            last[turn] = r["state"]
            steps.append((f"human-{turn}", r["state"]))
        elif r["type"] == "playFeedback" and turn is not None:
            last[turn] = r["state"]
        elif r["type"] == "chatRequest" and isinstance(r.get("state"), dict):
            open_turns = [k for k in last if k not in ended]
            if not open_turns:  # between AI turns: the human's move is still open
                pending = r["state"]
        elif r["type"] == "chatRequest" and last and all(k in ended for k in last) and pending is None:
            pending = latest  # a line without a state between AI turns opens it on the board last seen
    out: list[tuple[str, dict[str, Any] | None]] = []
    for anchor, state in steps:
        out.append((anchor, state))
        if anchor.startswith("human-"):
            turn = int(anchor.split("-")[1])
            out.append((f"ai-{turn}", last[turn]))
    if pending is not None:
        out.append(("human-s", pending))
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


def same_anchor(shown: str | None, expected: str) -> bool:
    """``human-s`` stands for any still-open human move (``human-s<index>``)."""
    return shown == expected or (expected == "human-s" and bool(shown) and str(shown).startswith("human-s"))


def walk_page(driver: Any, page: Path, records: list[dict[str, Any]]) -> int:
    """Open ``page`` in ``driver`` and step through it with the next button and the right arrow key in
    turn, checking at every step that the step shown is the one expected, that every piece's polygon
    (board and drawer) is the pose the transcript's state recorded, and in the end that the chat lines
    were shown in the transcript's order. AssertionError on the first difference; the steps checked."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    def shown() -> Any:
        sections = driver.find_elements(By.CSS_SELECTOR, "section.step:not([hidden])")
        assert len(sections) == 1, f"{len(sections)} steps on screen"
        return sections[0]

    def polygons(section: Any, svg: str) -> dict[str, list[tuple[float, float]]]:
        return {p.get_attribute("data-piece"): parse_points(p.get_attribute("points"))
                for p in section.find_elements(By.CSS_SELECTOR, f"svg.{svg} polygon.piece")}

    expected = expected_steps(records)
    driver.get(page.as_uri())
    seen_chat: list[tuple[str, str]] = []
    for i, (anchor, state) in enumerate(expected):
        section = shown()
        assert same_anchor(section.get_attribute("data-anchor"), anchor), (i, section.get_attribute("data-anchor"))
        assert driver.find_element(By.ID, "slider").get_attribute("value") == str(i)
        board, drawer = polygons(section, "board"), polygons(section, "drawer")
        if state is None:
            assert board == {} and len(drawer) == 7
        else:
            want, want_drawer = board_points(state), drawer_points(state)
            assert set(board) == set(want) and set(drawer) == set(want_drawer), anchor
            assert all(close(board[n], want[n]) for n in want), anchor
            assert all(close(drawer[n], want_drawer[n]) for n in want_drawer), anchor
        for line in section.find_elements(By.CSS_SELECTOR, "ol.chats li.chat"):
            who = "human" if "human" in line.get_attribute("class").split() else "agent"
            seen_chat.append((who, line.find_element(By.CSS_SELECTOR, ".text").text))
        if i % 2:  # both ways forward, in turn
            driver.find_element(By.ID, "next").click()
        else:
            ActionChains(driver).send_keys(Keys.ARROW_RIGHT).perform()
    assert same_anchor(shown().get_attribute("data-anchor"), expected[-1][0])  # stays on the last step
    assert seen_chat == chat_lines(records), "chat lines differ"
    return len(expected)
