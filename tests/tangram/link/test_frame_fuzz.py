"""Fuzzing the frame handler (issue 6, item 2): thousands of generated frames (valid, mutated,
garbage) go through ``Session.handle_raw``. Nothing escapes, nothing is left running after close,
and every frame the agent sends is one the game can take."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.core.transcript import Transcript
from agent.games.tangram.config import Config
from agent.games.tangram.contract import Decision, Player, TurnView
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.geometry.pieces import PIECE_NAMES
from agent.games.tangram.link.session import Session
from agent.games.tangram.sim.simgame import SimGame, frame_text
from tests.tangram.support import frame_problems

# Real frames as the game writes them, with real (small) images, built once.
_GAME = SimGame("A house")
_GAME.place("Red", 50, 30, 0)
VALID: list[dict[str, Any]] = [_GAME.play_request_frame(), _GAME.play_feedback_frame(),
                               _GAME.chat_request_frame("hi, put the square on top"), _GAME.no_type_error_frame()]


class FuzzPlayer(Player):
    """Answers at once from what it is given, sometimes badly (a raise, a hang, a pose far off)."""

    name = "fuzz"
    uses_images = True

    def __init__(self, choices: list[int]) -> None:
        self.choices = choices or [0]
        self.n = 0

    def _pick(self) -> int:
        self.n += 1
        return self.choices[self.n % len(self.choices)]

    async def play(self, view: TurnView) -> Decision:
        pick = self._pick()
        if pick == 1:
            raise RuntimeError("player bug")
        if pick == 2:
            await asyncio.Event().wait()  # hangs until the turn is cancelled or times out
        if pick == 3:
            return Decision(None, view.message or view.objective)
        piece = PIECE_NAMES[pick % len(PIECE_NAMES)]
        return Decision(Pose(piece, float(pick * 13 % 140 - 20), float(pick * 7 % 120), float(pick * 45)),
                        view.objective + " " + view.message)

    async def adjust(self, view: TurnView) -> Decision:
        return await self.play(view)

    async def chat(self, view: TurnView) -> str:
        if self._pick() == 1:
            raise ValueError("chat bug")
        return view.message


class Recorder:
    def __init__(self) -> None:
        self.sent: list[str] = []

    async def send(self, text: str) -> None:
        self.sent.append(text)


json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                      st.text(max_size=30), st.sampled_from(["playRequest", "chatRequest", "playFeedback", "error",
                                                             "(1, 2)", "(nan, 3)", "(1e999, 0)", *PIECE_NAMES]))
json_value = st.recursive(json_leaf, lambda kids: st.one_of(st.lists(kids, max_size=3),
                                                            st.dictionaries(st.text(max_size=8), kids, max_size=3)),
                          max_leaves=6)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a frame where a value sits: where a mutation can land."""
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += _paths(value, (*prefix, i))
    return out


PATHS = [_paths(frame) for frame in VALID]


@st.composite
def mutated_frame(draw: st.DrawFn) -> str | bytes:
    index = draw(st.integers(0, len(VALID) - 1))
    frame = json.loads(json.dumps(VALID[index]))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(PATHS[index]))
        try:
            parent: Any = frame
            for key in path[:-1]:
                parent = parent[key]
            action = draw(st.sampled_from(["replace", "replace", "delete", "add"]))
            if action == "delete" and isinstance(parent, dict):
                parent.pop(path[-1], None)
            elif action == "add" and isinstance(parent, dict):
                parent[draw(st.sampled_from(["type", "state", "Pink", "on_board", "message", "x"]))] = draw(json_value)
            else:
                parent[path[-1]] = draw(json_value)
        except (KeyError, IndexError, TypeError):
            pass  # an earlier mutation removed this spot
    text = json.dumps(frame, allow_nan=True)
    how = draw(st.sampled_from(["text", "text", "bytes", "truncated"]))
    if how == "bytes":
        return text.encode("utf-8", "surrogatepass")
    if how == "truncated":
        return text[: draw(st.integers(0, len(text)))]
    return text


valid_frame = st.sampled_from(VALID).map(frame_text)
garbage = st.one_of(st.text(max_size=200), st.binary(max_size=200),
                    json_value.map(lambda v: json.dumps(v, allow_nan=True)))
any_frame = st.one_of(valid_frame, mutated_frame(), mutated_frame(), garbage)


async def drive(frames: list[str | bytes], choices: list[int], settle: bool = False) -> list[str]:
    config = Config.model_validate({"turn": {"deadline": 3}, "transcripts": {"enabled": False}})
    conn = Recorder()
    session = Session(config, conn, FuzzPlayer(choices), Transcript(None), peer="fuzz")
    before = set(asyncio.all_tasks())
    me = asyncio.current_task()

    def running() -> list[asyncio.Task[Any]]:
        return [t for t in asyncio.all_tasks() if t not in before and t is not me and not t.done()]

    for raw in frames:
        await session.handle_raw(raw)  # must never raise
        for _ in range(3):
            await asyncio.sleep(0)  # let turns and chats move on between frames
    if settle:  # let every turn and chat finish on its own
        async with asyncio.timeout(5):
            while running():
                await asyncio.sleep(0.001)
    await session.close()
    assert not running(), running()
    return conn.sent


def unexpected_errors(records: list[logging.LogRecord]) -> list[str]:
    """ERROR records other than the fuzz player's own planted bugs: a frame or turn the session mishandled."""
    planted = ("player bug", "chat bug")
    return [f"{r.getMessage()} {r.exc_info[1] if r.exc_info else ''}" for r in records
            if r.levelno >= logging.ERROR and not (r.exc_info and str(r.exc_info[1]) in planted)]


def test_generated_frames_never_break_the_handler(caplog):
    caplog.set_level(logging.ERROR)  # the thousands of bad-frame warnings are not the point here
    counted = {"frames": 0}
    with asyncio.Runner() as runner:  # one loop for every example: asyncio.run() each time is slow

        @settings(max_examples=220, deadline=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
        @given(frames=st.lists(any_frame, min_size=8, max_size=12), choices=st.lists(st.integers(0, 30), max_size=5))
        def check(frames: list[str | bytes], choices: list[int]) -> None:
            counted["frames"] += len(frames)
            sent = runner.run(drive(frames, choices))
            bad = {text[:80]: frame_problems(text) for text in sent if frame_problems(text)}
            assert not bad, bad

        check()
    assert counted["frames"] >= 1750, counted  # 220 examples of at least 8 frames
    assert not unexpected_errors(caplog.records), unexpected_errors(caplog.records)[:5]


def test_whatever_text_the_player_sends_the_replies_stay_valid(caplog):
    caplog.set_level(logging.ERROR)
    """The player's text comes back in the agent's chat (the fuzz player echoes it, as a model might)."""
    with asyncio.Runner() as runner:

        @settings(max_examples=150, deadline=None)
        @given(message=st.text(max_size=3000), objective=st.text(max_size=400))
        def check(message: str, objective: str) -> None:
            no_images = {"board_img": None, "drawer_img": None}  # not what this test is about; they cost time
            frames = [json.dumps({**VALID[2], **no_images, "message": message, "objective": objective}),
                      json.dumps({**VALID[0], **no_images, "objective": objective + message})]
            sent = runner.run(drive(frames, [3], settle=True))
            types = [json.loads(text)["type"] for text in sent]
            assert types.count("finish") == 1  # the chat reply may come before or after it
            for text in sent:
                assert not frame_problems(text), (text[:200], frame_problems(text))
                data = json.loads(text)
                if data["type"] == "chat":
                    assert "\n" not in data["message"] and len(data["message"]) <= 600

        check()
    assert not unexpected_errors(caplog.records), unexpected_errors(caplog.records)[:5]
