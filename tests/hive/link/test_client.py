"""The client against scripted arenas: bad lines, gameover, closing, slow accept, one-write answers."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable

import pytest

from agent.games.hive.link import client as client_module
from agent.games.hive.link.client import check_team_name, play
from agent.games.hive.protocol import BeeView
from tests.hive.link.scripted_arena import GOOD, GOOD_P1, Recorder, ScriptedArena, single_read


async def test_plays_states_until_gameover_answering_in_one_read(arena_factory) -> None:
    answers: list[bytes] = []

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for line in (GOOD, GOOD_P1):
            writer.write(line)
            answers.append(await single_read(reader))
        writer.write(b"gameover\n")

    arena, port = await arena_factory(script)
    decider = Recorder()
    outcome = await play("127.0.0.1", port, "bees", decider)
    assert arena.names == [b"bees\n"]
    assert outcome.ending == "gameover" and outcome.states == 2
    assert answers == [b"3,0\n", b"3,0\n"]  # each answer whole in a single read
    assert outcome.player == 0


async def test_seat_comes_from_the_messages(arena_factory) -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(GOOD_P1)
        await single_read(reader)
        writer.write(b"gameover\n")

    _, port = await arena_factory(script)
    decider = Recorder()
    outcome = await play("127.0.0.1", port, "bees", decider)
    assert outcome.player == 1 and decider.views[0].player == 1


@pytest.mark.parametrize("bad", [
    b"hello\n",
    b"0,0,0,10,2,12345\n",
    b"\n",
    b"1,0,0,10,2,9000050900000090000009001000900100090710009001000\n",
    b"\xff\xfe\x00garbage\n",
    b"9" * 5000 + b"\n",
])
async def test_a_bad_line_gets_a_safe_answer_and_play_goes_on(arena_factory, bad: bytes) -> None:
    answers: list[bytes] = []

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(bad)
        answers.append(await single_read(reader))
        writer.write(GOOD)
        answers.append(await single_read(reader))
        writer.write(b"gameover\n")

    _, port = await arena_factory(script)
    decider = Recorder()
    outcome = await play("127.0.0.1", port, "bees", decider)
    assert answers == [b"0,0\n", b"3,0\n"]
    assert outcome.ending == "gameover" and outcome.bad_lines == 1 and outcome.states == 1
    assert len(decider.bad) == 1


async def test_a_line_and_the_next_arriving_together_are_both_answered(arena_factory) -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(GOOD + b"gameover\n")
        await single_read(reader)

    _, port = await arena_factory(script)
    outcome = await play("127.0.0.1", port, "bees", Recorder())
    assert outcome.ending == "gameover" and outcome.states == 1


async def test_the_arena_closing_mid_match_ends_quietly(arena_factory) -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(GOOD)
        await single_read(reader)
        writer.write(GOOD[:20])  # half a line, then the arena is gone

    _, port = await arena_factory(script)
    outcome = await play("127.0.0.1", port, "bees", Recorder())
    assert outcome.ending == "closed" and "partial line" in outcome.detail and outcome.states == 1


async def test_a_slow_accepting_arena_is_waited_for() -> None:
    """The arena starts listening only after the agent started dialling."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(0.3)  # slow to send the first state, too
        writer.write(GOOD)
        await single_read(reader)
        writer.write(b"gameover\n")

    arena = ScriptedArena(script)
    agent = asyncio.create_task(play("127.0.0.1", port, "bees", Recorder(), connect_timeout=10))
    await asyncio.sleep(0.4)
    assert not agent.done()
    await arena.start(port)
    try:
        outcome = await asyncio.wait_for(agent, 10)
    finally:
        await arena.close()
    assert outcome.ending == "gameover" and arena.names == [b"bees\n"]


async def test_nobody_listening_is_reported_not_raised() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    outcome = await play("127.0.0.1", port, "bees", Recorder(), connect_timeout=0.3)
    assert outcome.ending == "refused" and str(port) in outcome.detail


async def test_an_arena_gone_silent_ends_after_the_idle_timeout(arena_factory) -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(2)

    _, port = await arena_factory(script)
    outcome = await play("127.0.0.1", port, "bees", Recorder(), idle_timeout=0.2)
    assert outcome.ending == "idle"


async def test_a_failing_decider_still_answers(arena_factory) -> None:
    answers: list[bytes] = []

    class Broken(Recorder):
        def decide(self, view: BeeView) -> tuple[int, int]:
            raise RuntimeError("strategy bug")

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(GOOD)
        answers.append(await single_read(reader))
        writer.write(b"gameover\n")

    _, port = await arena_factory(script)
    outcome = await play("127.0.0.1", port, "bees", Broken())
    assert answers == [b"0,0\n"] and outcome.ending == "gameover"


async def test_a_slow_awaitable_decision_is_cut_off_before_the_forfeit(arena_factory, monkeypatch) -> None:
    monkeypatch.setattr(client_module, "DECIDE_LIMIT_S", 0.2)
    answers: list[bytes] = []

    class Slow(Recorder):
        def decide(self, view: BeeView) -> Awaitable[tuple[int, int]]:  # type: ignore[override]
            async def late() -> tuple[int, int]:
                await asyncio.sleep(5)
                return 2, 2
            return late()

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(GOOD)
        answers.append(await single_read(reader))
        writer.write(b"gameover\n")

    _, port = await arena_factory(script)
    outcome = await play("127.0.0.1", port, "bees", Slow())
    assert answers == [b"0,0\n"] and outcome.decision_ms[0] < 1000


@pytest.mark.parametrize("name", ["", "a\nb", "x" * 250, "tab\there"])
def test_bad_team_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError):
        check_team_name(name)


async def test_an_out_of_range_decision_is_replaced_by_a_safe_one(arena_factory) -> None:
    answers: list[bytes] = []

    class Wild(Recorder):
        def decide(self, view: BeeView) -> tuple[int, int]:
            return 7, 9

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(GOOD)
        answers.append(await single_read(reader))
        writer.write(b"gameover\n")

    _, port = await arena_factory(script)
    outcome = await play("127.0.0.1", port, "bees", Wild())
    assert answers == [b"0,0\n"] and outcome.ending == "gameover"
