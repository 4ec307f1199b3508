"""The game client over a real socket, against scripted agents that behave well and badly."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import pytest
from websockets.asyncio.server import ServerConnection, serve

from agent.games.tangram.sim import NO_TYPE_ERROR, GameClient, ScriptedHuman
from agent.games.tangram.sim.scripted_agent import ScriptedAgent, serve_scripted_agent


async def test_a_good_turn_end_to_end() -> None:
    async with serve_scripted_agent("good") as url, GameClient(url, objective="A house") as game:
        turn = await game.ai_turn(deadline=10)
        assert turn.finished and not turn.undone and turn.ended
        assert [p.shape for p in turn.plays] == ["Red"] and turn.plays[0].collisions == []
        assert turn.chat == ["I'll place Red."]
        assert [f.type for f in turn.frames] == ["chat", "play", "finish"]
        assert turn.latency is not None and turn.latency >= 0
        assert "Red" in game.game.state()["on_board"]
        assert game.violations == []
        assert [s.type for s in game.sent] == ["playRequest", "playFeedback"]
        reply = await game.chat("hello")
        assert reply.reply == "You said: hello" and reply.latency is not None


async def test_the_agent_receives_frames_exactly_as_formatted() -> None:
    seen: list[str] = []

    async def handler(ws: ServerConnection) -> None:
        async for raw in ws:
            seen.append(raw if isinstance(raw, str) else raw.decode())
            await ws.send(json.dumps({"type": "finish"}))

    async with serve(handler, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        async with GameClient(f"ws://127.0.0.1:{port}", objective="A cat") as game:
            game.game.place("Red", 50, 30, 0)
            await game.ai_turn(deadline=5)
    frame = json.loads(seen[0])
    assert frame["type"] == "playRequest" and frame["objective"] == "A cat"
    assert frame["state"]["on_board"]["Red"]["position"]["position"] == "(49.92582, 28.75776)"
    assert '"timestamp":0' in seen[0] and ", " not in seen[0].split('"state"')[0]


async def test_a_turn_that_never_ends_is_a_violation() -> None:
    async with serve_scripted_agent("never_finish") as url, GameClient(url) as game:
        turn = await game.ai_turn(deadline=0.3)
        assert turn.timed_out and not turn.ended
        assert [v.kind for v in game.violations] == ["turn_timeout"]
        assert game.game.turn_owner == "human"  # the game goes on


async def test_undo_on_a_colliding_finish() -> None:
    async with serve_scripted_agent("collide") as url, GameClient(url) as game:
        assert game.human_move("Purple", 50, 50, 0)
        turn = await game.ai_turn(deadline=5)
        assert turn.finished and turn.undone and turn.collisions == ["Purple"]
        assert set(game.game.on_board()) == {"Purple"}


async def test_one_piece_per_turn_over_the_socket() -> None:
    async with serve_scripted_agent("switch") as url, GameClient(url) as game:
        turn = await game.ai_turn(deadline=5)
        assert [p.shape for p in turn.plays] == ["Red", "Cream"]
        assert turn.plays[1].replaced == "Red" and turn.piece == "Cream"
        assert set(game.game.on_board()) == {"Cream"}


@pytest.mark.parametrize(("behaviour", "kind"), [
    ("unknown_piece", "unknown_piece"),
    ("huge_chat", "frame_too_large"),
    ("bad_json", "malformed_frame"),
    ("no_type", "no_type"),
])
async def test_bad_frames_are_recorded_and_the_turn_still_ends(behaviour: str, kind: str) -> None:
    async with serve_scripted_agent(behaviour) as url, GameClient(url) as game:
        turn = await game.ai_turn(deadline=5)
        assert turn.finished
        assert [v.kind for v in turn.violations] == [kind]


async def test_the_game_answers_a_typeless_frame_with_its_error() -> None:
    agent = ScriptedAgent("no_type")
    async with serve(agent.handle, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        async with GameClient(f"ws://127.0.0.1:{port}") as game:
            await game.ai_turn(deadline=5)
            for _ in range(50):  # the error frame is on its way back to the agent
                if any(r.get("type") == "error" for r in agent.received):
                    break
                await asyncio.sleep(0.01)
    assert {"type": "error", "message": NO_TYPE_ERROR} in agent.received


async def test_an_error_frame_ends_the_turn_in_the_current_source() -> None:
    async with serve_scripted_agent("error") as url, GameClient(url, build="source") as game:
        turn = await game.ai_turn(deadline=5)
        assert turn.errored and turn.error_message == "planner exploded" and turn.ended


async def test_the_shipped_build_leaves_a_turn_ended_by_error_hanging() -> None:
    async with serve_scripted_agent("error") as url, GameClient(url) as game:
        turn = await game.ai_turn(deadline=0.5)
        assert turn.timed_out
        assert [v.kind for v in game.violations] == ["error_ignored", "turn_timeout"]


async def test_play_and_finish_without_waiting_for_feedback() -> None:
    async with serve_scripted_agent("rush") as url, GameClient(url, tween=0.2) as game:
        turn = await game.ai_turn(deadline=5)
        assert turn.finished and turn.undone is False
        # The finish came during the animation: checked half-way, then the tween landed the piece.
        assert [v.kind for v in game.violations] == ["finish_during_animation"]
        assert game.game.turns[-1].landed_unchecked
        # The feedback still goes out, after the turn.
        assert await _eventually(lambda: any(s.type == "playFeedback" for s in game.sent))


async def _eventually(check: Callable[[], bool], timeout: float = 2.0) -> bool:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not check():
        if loop.time() > end:
            return False
        await asyncio.sleep(0.02)
    return True


async def test_raw_frames_and_next_frame() -> None:
    async with serve_scripted_agent("good") as url, GameClient(url) as game:
        await game.send_raw(json.dumps({"type": "chatRequest", "message": "raw", "objective": "x"}))
        frame = await game.next_frame(timeout=5, type="chat")
        assert frame is not None and frame.data == {"type": "chat", "message": "You said: raw"}
        assert await game.next_frame(timeout=0.05) is None


@pytest.mark.timeout(30)
async def test_next_frame_returns_a_frame_only_after_the_game_handled_it() -> None:
    # On Python 3.12+ the waiter in next_frame woke before the client's worker had applied the frame:
    # a `finish` came back while the turn still looked unended (ended_by None).
    async with serve_scripted_agent("good") as url, GameClient(url) as game:
        for _ in range(3):
            request = game.game.start_ai_turn()
            await game.send_frame(request)
            for kind in ("chat", "play", "finish"):
                frame = await game.next_frame(timeout=10, type=kind)
                assert frame is not None, kind
                if kind == "play":
                    assert game.game.turns[-1].plays  # the play is on the simulated board already
            assert game.game.turns[-1].ended_by == "finish"
            assert game.game.turn_owner == "human"
            assert await _eventually(lambda: not game._pending_feedback)


async def test_a_turn_that_ends_as_the_connection_closes_still_counts_its_finish() -> None:
    async def finish_then_leave(ws: ServerConnection) -> None:
        await ws.recv()
        await ws.send(json.dumps({"type": "finish"}))
        await ws.close()

    async with serve(finish_then_leave, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        async with GameClient(f"ws://127.0.0.1:{port}") as game:
            turn = await game.ai_turn(deadline=10)
            assert turn.ended_by == "finish"
            assert await game.next_frame(timeout=5, type="finish") is not None
            assert await game.next_frame(timeout=5) is None  # closed and drained: no waiting out the time-out


class _MidTurnTalker(ScriptedHuman):
    def chat_during(self, game: object) -> list[str]:
        return ["are you there?"]


async def test_the_human_can_chat_during_the_ai_turn() -> None:
    async with serve_scripted_agent("good") as url, GameClient(url, human=_MidTurnTalker("talker")) as game:
        turn = await game.ai_turn(deadline=5)
        await game.settle_chats(5)
    assert turn.finished
    (request,) = game.chats
    assert request.during_ai_turn and request.reply is not None and request.latency is not None
    assert [c.speaker for c in game.game.chat_log if c.during_ai_turn][:1] == ["human"]


async def test_silence_leaves_chat_unanswered_and_the_turn_open() -> None:
    async with serve_scripted_agent("silent") as url, GameClient(url, chat_timeout=0.2) as game:
        reply = await game.chat("anyone?")
        assert reply.reply is None and reply.latency is None
        turn = await game.ai_turn(deadline=0.2)
        assert turn.timed_out


async def test_the_agent_closing_the_socket_is_recorded() -> None:
    async def handler(ws: ServerConnection) -> None:
        await ws.recv()
        await ws.close()

    async with serve(handler, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        async with GameClient(f"ws://127.0.0.1:{port}") as game:
            turn = await game.ai_turn(deadline=5)
            assert turn.ended_by == "closed"
            assert [v.kind for v in game.violations] == ["connection_closed"]
            assert not game.connected
