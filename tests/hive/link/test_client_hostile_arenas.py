"""The bee client survived every hostile arena of issue 22; these keep it that way (real sockets)."""

from __future__ import annotations

import asyncio

from agent.games.hive.link.client import play
from tests.hive.link.scripted_arena import GOOD, Recorder, single_read


async def test_a_10_mb_line_then_a_good_state_is_survived(arena_factory) -> None:
    answers: list[bytes] = []

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"7" * 10_000_000 + b"\n")
        await writer.drain()
        writer.write(GOOD)
        answers.append(await asyncio.wait_for(reader.readline(), 10))
        answers.append(await asyncio.wait_for(reader.readline(), 10))
        writer.write(b"gameover\n")

    _, port = await arena_factory(script)
    outcome = await asyncio.wait_for(play("127.0.0.1", port, "bees", Recorder()), 30)
    assert outcome.ending == "gameover" and outcome.states == 1, outcome
    assert answers[-1] == b"3,0\n" and all(a.endswith(b"\n") and len(a) <= 8 for a in answers), answers


async def test_a_state_split_into_pieces_or_dripped_a_byte_at_a_time_is_answered_once(arena_factory) -> None:
    answers: list[bytes] = []

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for cut in (GOOD[:7], GOOD[7:30], GOOD[30:]):
            writer.write(cut)
            await writer.drain()
            await asyncio.sleep(0.05)
        answers.append(await single_read(reader))
        for byte in GOOD:
            writer.write(bytes([byte]))
            await writer.drain()
            await asyncio.sleep(0.005)
        answers.append(await single_read(reader))
        writer.write(b"gameover\n")

    _, port = await arena_factory(script)
    outcome = await asyncio.wait_for(play("127.0.0.1", port, "bees", Recorder()), 30)
    assert answers == [b"3,0\n", b"3,0\n"] and outcome.states == 2 and outcome.bad_lines == 0


async def test_a_flood_of_2000_states_ends_in_gameover_with_every_answer_well_formed(arena_factory) -> None:
    received = bytearray()

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(GOOD * 2000 + b"gameover\n")
        await writer.drain()
        while True:
            chunk = await asyncio.wait_for(reader.read(65536), 10)
            if not chunk:
                break
            received.extend(chunk)

    arena, port = await arena_factory(script)
    outcome = await asyncio.wait_for(play("127.0.0.1", port, "bees", Recorder()), 60)
    # The arena reads the answers in its own task: wait for it. (The client answers a buffered flood
    # without yielding on 3.12+, whose wait_for runs the read in the caller's task, so when play()
    # returns the arena may not have read a byte yet; on 3.11 it happened to keep up.)
    await asyncio.wait_for(arena.done.wait(), 10)
    lines = bytes(received).splitlines()
    assert outcome.ending == "gameover" and 1 <= outcome.states <= 2000, outcome
    assert lines and set(lines) == {b"3,0"}, set(lines)
