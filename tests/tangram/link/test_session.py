"""The session's turn loop against a scripted player, with no socket: every path ends the turn.

The session runs on a :class:`ManualClock`: time moves only when a test says so (:func:`advance`),
so deadlines and animations are tested exactly and without waiting.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent.core.transcript import Transcript
from agent.games.tangram.config import Config
from agent.games.tangram.contract import Decision, Player, TurnView
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.link.clock import Cancellable
from agent.games.tangram.link.session import Session
from agent.games.tangram.turn.timing import FEEDBACK_LOST_S
from tests.tangram.turn.support import LINES


class _Handle:
    def __init__(self, when: float, callback: Callable[[], None]) -> None:
        self.when, self.callback, self.cancelled = when, callback, False

    def cancel(self) -> None:
        self.cancelled = True


class ManualClock:
    """The session's clock in these tests: it stands still until :func:`advance` moves it."""

    def __init__(self) -> None:
        self.t = 1000.0
        self._handles: list[_Handle] = []

    def now(self) -> float:
        return self.t

    def call_at(self, when: float, callback: Callable[[], None]) -> Cancellable:
        handle = _Handle(when, callback)
        self._handles.append(handle)
        return handle

    async def advance(self, seconds: float, session: Session) -> None:
        """Move on by ``seconds``, firing each timer that falls due on the way, in time order, and
        letting the session handle it before the next one (it may set new timers)."""
        until = self.t + seconds
        while True:
            await session.settled()
            due = [h for h in self._handles if not h.cancelled and h.when <= until]
            if not due:
                break
            handle = min(due, key=lambda h: h.when)
            self._handles.remove(handle)
            self.t = max(self.t, handle.when)
            handle.callback()
        self.t = until


async def advance(session: Session, seconds: float) -> None:
    assert isinstance(session.clock, ManualClock)
    await session.clock.advance(seconds, session)


class FakeConnection:
    def __init__(self, clock: ManualClock | None = None) -> None:
        self.clock = clock
        self.sent: list[dict[str, Any]] = []
        self.sent_at: list[float] = []
        """The session clock's time of each frame sent."""
        self._queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def send(self, text: str) -> None:
        frame = json.loads(text)
        self.sent.append(frame)
        self.sent_at.append(self.clock.now() if self.clock is not None else 0.0)
        self._queue.put_nowait(frame)

    def at(self, ftype: str) -> list[float]:
        return [t for t, f in zip(self.sent_at, self.sent, strict=True) if f["type"] == ftype]

    async def next(self, timeout: float = 5.0) -> dict[str, Any]:
        return await asyncio.wait_for(self._queue.get(), timeout)

    async def until(self, ftype: str, timeout: float = 5.0) -> dict[str, Any]:
        while True:
            frame = await self.next(timeout)
            if frame["type"] == ftype:
                return frame


class ScriptedPlayer(Player):
    name = "scripted"

    def __init__(self, plays: list[Any], adjusts: list[Any] | None = None, chat_delay: float = 0.0) -> None:
        self.plays = list(plays)
        self.adjusts = list(adjusts or [])
        self.chat_delay = chat_delay
        self.views: list[TurnView] = []
        self.release = asyncio.Event()

    async def _next(self, queue: list[Any], view: TurnView) -> Decision:
        self.views.append(view)
        item = queue.pop(0)
        if item == "hang":
            await asyncio.Event().wait()
        if item == "wait-release":
            await self.release.wait()
            item = queue.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    async def play(self, view: TurnView) -> Decision:
        return await self._next(self.plays, view)

    async def adjust(self, view: TurnView) -> Decision:
        return await self._next(self.adjusts, view)

    async def chat(self, view: TurnView) -> str:
        await asyncio.sleep(self.chat_delay)
        return f"you said: {view.message}"


def state(on_board: dict[str, tuple[float, float, float, list[str]]] | None = None) -> dict[str, Any]:
    board = {name: {"position": {"position": f"({x}, {y})", "vertices": []}, "rotation": r, "collisions": c}
             for name, (x, y, r, c) in (on_board or {}).items()}
    names = ("Red", "Cream", "Blue", "Green", "Yellow", "Purple", "Brown")
    off = {n: {"rotation": 0.0} for n in names if n not in board}
    return {"on_board": board, "off_board": off}


def frame(ftype: str, board: dict | None = None, **extra: Any) -> str:
    return json.dumps({"type": ftype, "objective": "A house", "state": state(board), "board_img": "",
                       "drawer_img": "", "timestamp": 3, **extra})


def make_session(player: Any, deadline: float = 5.0, **turn: Any) -> tuple[Session, FakeConnection]:
    config = Config.model_validate({"turn": {"deadline": deadline, **turn}, "transcripts": {"enabled": False}})
    clock = ManualClock()
    conn = FakeConnection(clock)
    return Session(config, conn, player, Transcript(None), peer="test", clock=clock), conn


GREEN = Pose("Green", 50.0, 50.0, 0.0)


async def test_clean_play_then_finish():
    player = ScriptedPlayer([Decision(GREEN, "I put Green in the middle.")])
    session, conn = make_session(player)
    await session.handle_raw(frame("playRequest"))
    assert (await conn.next())["type"] == "chat"
    play = await conn.until("play")
    assert play["shape"] == "Green" and play["position"] == pytest.approx([50.0, 50.0])
    await session.handle_raw(frame("playFeedback", {"Green": (50, 50, 0, [])}))
    await conn.until("finish")
    await session.close()
    assert session.memory.recent()[-1].text.startswith("(moved Green)")


async def test_collision_reported_by_the_game_leads_to_a_corrected_play_then_finish():
    # The game reports a collision the prediction did not see: the session must play again, then finish.
    player = ScriptedPlayer([Decision(GREEN, "Green here.")], adjusts=[Decision(Pose("Green", 20, 20, 0), "moved")])
    session, conn = make_session(player)
    await session.handle_raw(frame("playRequest"))
    first = await conn.until("play")
    await session.handle_raw(frame("playFeedback", {"Green": (50, 50, 0, ["Red"])}))
    second = await conn.until("play")
    assert second["position"] != first["position"]
    await session.handle_raw(frame("playFeedback", {"Green": (second["position"][0], second["position"][1], 0, [])}))
    await conn.until("finish")
    await session.close()


async def test_feedback_loop_is_bounded_by_max_feedback_iterations():
    player = ScriptedPlayer([Decision(GREEN, "Green here.")],
                            adjusts=[Decision(Pose("Green", 20 + 5 * i, 20, 0), "again") for i in range(10)])
    session, conn = make_session(player, max_feedback_iterations=2)
    await session.handle_raw(frame("playRequest"))
    plays = 0
    while True:
        sent = await conn.next()
        if sent["type"] == "play":
            plays += 1
            await session.handle_raw(frame("playFeedback", {"Green": (*sent["position"], 0, ["BOUNDARY"])}))
        elif sent["type"] == "finish":
            break
    # The first play, the same play again (our geometry finds (50, 50) clear, so the report may be one
    # physics step stale), two corrections, and the piece moved back where it was.
    assert plays == 5
    await session.close()


async def test_a_player_that_hangs_still_ends_the_turn_within_the_deadline():
    session, conn = make_session(ScriptedPlayer(["hang"]), deadline=1.5)
    start = session.clock.now()
    await session.handle_raw(frame("playRequest"))
    await advance(session, 1.5)
    await conn.until("finish")
    assert conn.at("finish")[0] - start <= 1.5
    assert any(f["type"] == "chat" and "time" in f["message"] for f in conn.sent)
    await session.close()


async def test_a_game_that_never_sends_feedback_still_gets_finish():
    session, conn = make_session(ScriptedPlayer([Decision(GREEN, "Green.")]), deadline=3.0)
    await session.handle_raw(frame("playRequest"))
    await conn.until("play")
    await advance(session, 3.0)
    assert "finish" not in [f["type"] for f in conn.sent]  # the play may still be landing
    await advance(session, FEEDBACK_LOST_S)
    await conn.until("finish")
    # Not while the play may land: only at the hard cap, the feedback taken as lost.
    [played], [finished] = conn.at("play"), conn.at("finish")
    assert finished == pytest.approx(played + FEEDBACK_LOST_S)
    await session.close()


async def test_a_deadline_too_short_for_the_games_learnt_landing_sends_no_play():
    player = ScriptedPlayer([Decision(GREEN, "Green."), Decision(GREEN, "Green again.")])
    session, conn = make_session(player, deadline=2.0)
    await session.handle_raw(frame("playRequest"))
    await conn.until("play")
    await advance(session, 1.9)  # this game takes 1.9 s to land a play
    await session.handle_raw(frame("playFeedback", {"Green": (50, 50, 0, [])}))
    await conn.until("finish")
    await session.handle_raw(frame("playRequest", {"Green": (50, 50, 0, [])}))
    await conn.until("finish", timeout=5)
    assert [f["type"] for f in conn.sent].count("play") == 1
    assert conn.sent[-2]["message"] == LINES("no_time")
    await session.close()


async def test_a_player_that_raises_costs_one_turn_not_the_session():
    player = ScriptedPlayer([RuntimeError("boom"), Decision(GREEN, "Green.")])
    session, conn = make_session(player)
    await session.handle_raw(frame("playRequest"))
    await conn.until("finish")
    assert any(f["type"] == "chat" and "wrong" in f["message"] for f in conn.sent)
    await session.handle_raw(frame("playRequest"))
    await conn.until("play")
    await session.close()


async def test_pass_sends_its_reason_and_finish():
    session, conn = make_session(ScriptedPlayer([Decision(None, "The house is complete!")]))
    await session.handle_raw(frame("playRequest"))
    chat = await conn.next()
    assert chat == {**chat, "type": "chat", "message": "The house is complete!"}
    await conn.until("finish")
    await session.close()


async def test_an_impossible_pose_is_repaired_before_it_is_sent():
    # Far off the board and on top of Red: the session must never send that.
    player = ScriptedPlayer([Decision(Pose("Green", 120, 50, 0), "Green.")])
    session, conn = make_session(player)
    await session.handle_raw(frame("playRequest", {"Red": (50, 50, 0, [])}))
    play = await conn.until("play")
    assert 0 < play["position"][0] < 100
    await session.close()


async def test_chat_during_a_slow_play_is_answered_before_the_play():
    player = ScriptedPlayer(["wait-release", Decision(GREEN, "Green.")])
    session, conn = make_session(player)
    await session.handle_raw(frame("playRequest"))
    await session.handle_raw(frame("chatRequest", message="what are you doing?"))
    reply = await conn.until("chat")
    assert reply["message"] == "you said: what are you doing?"
    assert not any(f["type"] == "play" for f in conn.sent)
    player.release.set()
    await conn.until("play")
    await session.close()


async def test_bad_frame_mid_turn_ends_the_turn_and_the_next_turn_works():
    player = ScriptedPlayer([Decision(GREEN, "Green."), Decision(Pose("Green", 30, 30, 0), "Green again.")])
    session, conn = make_session(player)
    await session.handle_raw(frame("playRequest"))
    await conn.until("play")
    await session.handle_raw("{not json")  # during the play's animation: its feedback is waited for
    await advance(session, 2.5)
    assert "finish" not in [f["type"] for f in conn.sent]
    await session.handle_raw(frame("playFeedback", {"Green": (50, 50, 0, [])}))
    await conn.until("finish")
    await session.handle_raw(frame("playRequest"))
    await conn.until("play")
    await session.close()


async def test_unreadable_play_request_is_answered_with_chat_and_finish():
    # The shipped game ignores an error frame (GAME_FACTS): only finish ends the turn.
    session, conn = make_session(ScriptedPlayer([]))
    await session.handle_raw('{"type": "playRequest", "state": 17}')
    said = await conn.next()
    assert said["type"] == "chat" and "couldn't read" in said["message"]
    assert (await conn.next())["type"] == "finish"
    assert not any(f["type"] == "error" for f in conn.sent)
    await session.close()


async def test_polite_close_ends_a_running_turn():
    session, conn = make_session(ScriptedPlayer(["hang"]))
    await session.handle_raw(frame("playRequest"))
    await asyncio.sleep(0)
    await session.close("shutdown", polite=True)
    assert [f["type"] for f in conn.sent][-2:] == ["chat", "finish"]


async def test_partner_moves_reach_the_memory():
    player = ScriptedPlayer([Decision(None, "pass"), Decision(None, "pass")])
    session, conn = make_session(player)
    await session.handle_raw(frame("playRequest"))
    await conn.until("finish")
    await session.handle_raw(frame("playRequest", {"Blue": (30, 40, 90, [])}))
    await conn.until("finish")
    texts = [e.text for e in player.views[-1].memory.recent()]
    assert any("partner moved Blue" in t for t in texts)
    await session.close()


async def test_a_bad_frame_right_behind_the_play_request_still_gets_finish():
    # The real game's playRequest is parsed in a worker thread; the bad frame after it can then be
    # handled before the turn's task has run at all.
    session, conn = make_session(ScriptedPlayer([Decision(GREEN, "Green.")]))
    await session.handle_raw(frame("playRequest"))
    await session.handle_raw("{not json")
    await conn.until("finish")
    assert not any(f["type"] == "play" for f in conn.sent)
    await session.close()


async def test_a_play_feedback_we_did_not_ask_for_is_ignored():
    player = ScriptedPlayer(["wait-release", Decision(GREEN, "Green.")])
    session, conn = make_session(player)
    await session.handle_raw(frame("playRequest"))
    await session.handle_raw(frame("playFeedback", {"Green": (50, 50, 0, ["Red"])}))  # stray, before any play
    player.release.set()
    await conn.until("play")
    await session.handle_raw(frame("playFeedback", {"Green": (50, 50, 0, [])}))
    await conn.until("finish")
    assert session.memory.recent()[-1].text.startswith("(moved Green)")
    await session.close()


async def test_a_move_the_game_puts_back_is_not_taken_for_the_partners_move():
    player = ScriptedPlayer([Decision(GREEN, "Green."), Decision(None, "pass")])
    session, conn = make_session(player, max_feedback_iterations=0)
    await session.handle_raw(frame("playRequest"))
    await conn.until("play")
    for _ in range(2):  # the same play once more (our geometry finds (50, 50) clear), then believed
        await session.handle_raw(frame("playFeedback", {"Green": (50, 50, 0, ["BOUNDARY"])}))
        await conn.until("play")
    await session.handle_raw(frame("playFeedback"))  # put back in the drawer: nothing on the board
    await conn.until("finish")  # gave up
    await session.handle_raw(frame("playRequest"))
    await conn.until("finish")
    assert not any("partner" in e.text for e in player.views[-1].memory.recent())
    await session.close()


def test_finish_is_built_at_one_place_outside_the_protocol():
    # The machine asks for it (SendFinish, on entering its finished phase); one line of the session sends it.
    root = Path(__file__).resolve().parents[3] / "agent"
    uses = [(path.name, line) for path in root.rglob("*.py") if path.name != "protocol.py"
            for line in path.read_text().splitlines() if "finish_frame(" in line and "import" not in line]
    assert [name for name, _ in uses] == ["session.py"], uses
