"""The scripted human: what a person does with a mouse and keyboard on the game's canvas, each step
confirmed by what the game prints or sends (never by waiting a fixed time)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.tangram.real_game.browser import RUNNER_TAG, Recorder, StepTimeout, frames
from benchmarks.tangram.real_game.console import MOVING_LINE, overlaps
from benchmarks.tangram.real_game.events import Event
from benchmarks.tangram.real_game.screen import (
    CHAT_INPUT,
    END_TURN,
    FINISH,
    HUMAN_ORDER,
    SEND,
    START_ORIGINS,
    UNDO,
    WIDTH,
    Button,
    board_to_world,
    drop_spot,
    world_to_screen,
)
from benchmarks.tangram.real_game.tally import piece_position

ASCII_RUNS = re.compile(r"[\x00-\x7f]+|[^\x00-\x7f]+")
"""A line cut into runs of ASCII (Playwright types them) and of other characters (typed one key each)."""


def latest_state(events: list[Event], ws: int) -> dict[str, Any] | None:
    for event in reversed(events):
        if event.src == "game" and event.ws == ws and isinstance(event.msg.get("state"), dict):
            return event.msg["state"]
    return None


@dataclass
class Human:
    page: Any
    rec: Recorder
    shots: Path
    step_s: float = 60.0
    """Bound of one UI step (the game draws 2-3 frames a second in software)."""
    canvas: tuple[float, float, float] = (0.0, 0.0, 1.0)
    """The canvas's left and top on the page and its scale (CSS px per game px)."""
    _cdp: Any = None
    """The page's DevTools session, opened for the first character Playwright cannot type."""

    async def find_canvas(self) -> None:
        box = await self.page.evaluate(
            "() => { const r = document.querySelector('canvas').getBoundingClientRect(); return [r.x, r.y, r.width]; }")
        self.canvas = (float(box[0]), float(box[1]), float(box[2]) / WIDTH)

    def at(self, x: float, y: float) -> tuple[float, float]:
        """Page coordinates of the game's screen point (x, y) (1920 x 1080)."""
        left, top, scale = self.canvas
        return left + x * scale, top + y * scale

    async def click(self, button: Button) -> None:
        x, y = self.at(*button.center())
        await self.page.mouse.move(x, y)
        await frames(self.page, 2)
        await self.page.mouse.click(x, y)
        await frames(self.page, 3)

    async def wait_socket(self, since: int) -> None:
        await self.rec.until(lambda e: e.src == "console" and e.text.startswith(f"{RUNNER_TAG} websocket open"),
                             since, self.step_s, "the game's socket to the agent to open")

    async def end_turn(self, then_send: str = "") -> Event:
        """Press End Turn; the playRequest it sent. With ``then_send`` (text already typed in the chat
        box) Send is pressed right after, before the game draws again, so the chatRequest reaches the
        agent during its turn however slowly the game draws."""
        since = self.rec.cursor
        x, y = self.at(*END_TURN.center())
        await self.page.mouse.move(x, y)
        await frames(self.page, 2)
        await self.page.mouse.click(x, y)
        if then_send:
            await self.page.mouse.click(*self.at(*SEND.center()))
        event = await self.rec.until(lambda e: e.src == "game" and e.type == "playRequest", since, self.step_s,
                                     "the playRequest after End Turn")
        self.rec.note("human", "end turn")
        if then_send:
            await self.rec.until(
                lambda e: e.src == "game" and e.type == "chatRequest" and e.msg.get("message") == then_send,
                since, self.step_s, f"the chatRequest for {then_send!r}")
            self.rec.note("human", "chat", message=then_send)
        return event

    async def type_chat(self, text: str) -> None:
        """Type ``text`` into the chat box without sending it. Characters beyond ASCII (Portuguese
        accents) are typed as key presses carrying the character, as a keyboard that has them sends
        them: Playwright's own typing only inserts them as text, which the game never sees."""
        await self.click(CHAT_INPUT)
        for run in ASCII_RUNS.findall(text):
            if run.isascii():
                await self.page.keyboard.type(run)
            else:
                for char in run:
                    await self._key_with_text(char)
        await frames(self.page, 3)

    async def _key_with_text(self, char: str) -> None:
        if self._cdp is None:
            self._cdp = await self.page.context.new_cdp_session(self.page)
        await self._cdp.send("Input.dispatchKeyEvent", {"type": "keyDown", "key": char, "text": char,
                                                         "unmodifiedText": char})
        await self._cdp.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": char})

    async def send_chat(self, text: str) -> Event:
        """Press Send; the chatRequest that carried ``text``."""
        since = self.rec.cursor
        await self.click(SEND)
        event = await self.rec.until(
            lambda e: e.src == "game" and e.type == "chatRequest" and e.msg.get("message") == text,
            since, self.step_s, f"the chatRequest for {text!r}")
        self.rec.note("human", "chat", message=text)
        return event

    async def chat(self, text: str) -> Event:
        await self.type_chat(text)
        return await self.send_chat(text)

    async def undo(self) -> None:
        await self.click(UNDO)
        self.rec.note("human", "undo")

    async def finish(self) -> None:
        await self.click(FINISH)
        self.rec.note("human", "finish button")

    async def screenshot(self, name: str) -> None:
        self.shots.mkdir(parents=True, exist_ok=True)
        await self.page.screenshot(path=str(self.shots / f"{name}.png"), timeout=self.step_s * 1000)

    async def _press(self, shape: str, grab: tuple[float, float] | None = None) -> str | None:
        """Mouse down on ``shape`` at world point ``grab`` (default: its place in the drawer); the
        piece the game says it picked, or None."""
        x, y = self.at(*world_to_screen(*(grab or START_ORIGINS[shape])))
        await self.page.mouse.move(x + 30, y + 30)
        await self.page.mouse.move(x, y, steps=2)
        await frames(self.page, 3)  # the physics picking sees the pointer enter the piece
        since = self.rec.cursor
        await self.page.mouse.down()
        try:
            line = await self.rec.until(lambda e: e.src == "console" and MOVING_LINE.match(e.text) is not None,
                                        since, self.step_s, f"the game to pick up {shape}")
        except StepTimeout:
            await self.page.mouse.up()
            await frames(self.page, 3)
            return None
        match = MOVING_LINE.match(line.text)
        return match.group(1) if match else None

    async def _drop(self, spot: tuple[float, float]) -> list[str] | None:
        x, y = self.at(*world_to_screen(*board_to_world(*spot)))
        await self.page.mouse.move(x, y, steps=3)
        await frames(self.page, 4)  # the piece follows the pointer in _process; physics updates overlaps
        since = self.rec.cursor
        await self.page.mouse.up()
        line = await self.rec.until(lambda e: e.src == "console" and overlaps(e.text) is not None, since,
                                    self.step_s, "the game's overlap check after the drop")
        await frames(self.page, 2)
        return overlaps(line.text)

    async def drag_piece(self, ws: int, avoid: set[str] | None = None, order: Sequence[str] = HUMAN_ORDER) -> str:
        """Drag a drawer piece (the first of ``order`` the drawer holds) onto the roomiest free spot of
        the board; the piece moved. Tries other spots, and pieces, when the game refuses a drop (it
        puts the piece back when the drop overlaps)."""
        state = latest_state(self.rec.log.events, ws) or {"on_board": {}, "off_board": dict.fromkeys(START_ORIGINS)}
        on_board = _on_board(state)
        off_board = [name for name in order
                     if name in (state.get("off_board") or {}) and name not in (avoid or set())]
        if not off_board:
            raise StepTimeout("no piece left in the drawer for the human to move")
        for shape in off_board[:3]:
            picked = await self._drag_to_room(shape, START_ORIGINS[shape], on_board)
            if picked is not None:
                return picked
        raise StepTimeout("the game refused every drop the scripted human tried")

    async def move_board_piece(self, ws: int, order: Sequence[str] = HUMAN_ORDER) -> str:
        """Drag a piece already on the board (the first of ``order`` there) to the roomiest free spot
        of the rest of the board: the human's move when the drawer is empty; the piece moved."""
        on_board = _on_board(latest_state(self.rec.log.events, ws) or {})
        for shape in [name for name in order if name in on_board][:3]:
            others = {name: pos for name, pos in on_board.items() if name != shape}
            picked = await self._drag_to_room(shape, board_to_world(*on_board[shape]), others)
            if picked is not None:
                return picked
        raise StepTimeout("the game refused every move of a board piece the scripted human tried")

    async def _drag_to_room(self, shape: str, grab: tuple[float, float],
                            on_board: dict[str, tuple[float, float]]) -> str | None:
        """Press on ``shape`` at world point ``grab`` and drop it on the roomiest spot the game
        accepts (a refused drop puts it back where it was: it is grabbed there again); the piece
        the game moved, or None."""
        picked = await self._press(shape, grab)
        if picked is None:
            return None
        for spot in drop_spot(on_board)[:3]:
            touched = await self._drop(spot)
            self.rec.note("human", "drag", shape=picked, spot=list(spot), overlaps=touched)
            if touched == []:
                return picked
            # The game put it back where it was (another piece picked: in the drawer).
            again = await self._press(picked, grab if picked == shape else None)
            if again is None:
                return None
            picked = again
        await self.page.mouse.up()
        await frames(self.page, 3)
        return None


def _on_board(state: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """Each on-board piece's marker (board units) in a state."""
    return {name: pos for name in (state.get("on_board") or {})
            if (pos := piece_position({"state": state}, name)) is not None}
