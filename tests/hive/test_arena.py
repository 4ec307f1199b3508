"""The local arena as the real one behaves: names, seats, single-read answers, forfeits, the log."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from agent.games.hive.arena import Arena, ArenaResult
from agent.games.hive.link.client import play
from agent.games.hive.opponents.bots import make_bot
from agent.games.hive.protocol import parse_log, parse_state

Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def raw_client(port: int, name: bytes | None, script: Script) -> list[bytes]:
    """Connect, send a name, run a script; returns everything received until the arena closes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    if name is not None:
        writer.write(name)
    try:
        await script(reader, writer)
        rest = await asyncio.wait_for(reader.read(), 5)
        return [rest]
    finally:
        writer.close()


async def answer_moves(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """A well-behaved player: move north on every state until gameover."""
    while True:
        line = await reader.readline()
        if not line or line == b"gameover\n":
            return
        writer.write(b"0,0\n")


async def run(arena: Arena, *clients: Callable[[int], Awaitable[object]]) -> tuple[ArenaResult, list[object]]:
    task = asyncio.create_task(arena.serve())
    await arena.listening.wait()
    results = await asyncio.gather(*(c(arena.port) for c in clients), return_exceptions=True)
    return await asyncio.wait_for(task, 30), list(results)


async def test_a_full_match_between_two_bots_writes_the_arena_log(tmp_path: Path) -> None:
    log = tmp_path / "m.log"
    arena = Arena(port=0, log_path=log, seed=11)
    result, outcomes = await run(arena, lambda p: play("127.0.0.1", p, "ours", make_bot("ours", 1)),
                                 lambda p: play("127.0.0.1", p, "ex", make_bot("example", 2)))
    assert result.played and result.forfeit is None
    assert set(result.names) == {"ours", "ex"}
    assert all(getattr(o, "ending", None) == "gameover" for o in outcomes)
    parsed = parse_log(log.read_text())
    assert parsed.names == result.names
    assert parsed.turns[0].turn == 0 and parsed.turns[-1].action == -1
    assert len(parsed.turns) == result.turns + 1
    assert (parsed.turns[-1].score0, parsed.turns[-1].score1) == result.scores
    assert parsed.winner == result.winner
    lines = log.read_text().splitlines()
    assert lines[0].startswith("# Player 0: ") and lines[1].startswith("# Player 1: ")
    assert lines[-1].startswith("# Winner: player ") or lines[-1] == "# Draw"
    # The log shows the grid each command was given in: turn 0's grid is the start position.
    assert parsed.turns[0].grid[12 * 30 + 1] == "7" and parsed.turns[0].grid[12 * 30 + 28] == "8"


async def test_seats_are_shuffled_not_by_connection_order() -> None:
    firsts = set()
    for seed in range(12):
        arena = Arena(port=0, seed=seed, answer_timeout=0.2)

        async def first(port: int) -> None:
            await raw_client(port, b"first\n", answer_moves)

        async def second(port: int) -> None:
            await asyncio.sleep(0.05)
            await raw_client(port, b"second\n", answer_moves)

        result, _ = await run(arena, first, second)
        firsts.add(result.names[0])
    assert firsts == {"first", "second"}


async def test_the_state_a_player_gets_is_for_its_own_seat() -> None:
    seen: dict[str, set[int]] = {"a": set(), "b": set()}

    def watcher(name: str) -> Script:
        async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            for _ in range(20):
                line = await reader.readline()
                if line == b"gameover\n" or not line:
                    return
                seen[name].add(parse_state(line.decode()[:-1]).player)
                writer.write(b"0,0\n")
            await answer_moves(reader, writer)
        return script

    arena = Arena(port=0, seed=3)
    result, _ = await run(arena, lambda p: raw_client(p, b"a\n", watcher("a")),
                          lambda p: raw_client(p, b"b\n", watcher("b")))
    assert seen["a"] == {result.names.index("a")} and seen["b"] == {result.names.index("b")}


async def forfeit_match(bad: Script, timeout: float = 0.3) -> ArenaResult:
    arena = Arena(port=0, seed=5, answer_timeout=timeout)
    result, _ = await run(arena, lambda p: raw_client(p, b"bad\n", bad),
                          lambda p: raw_client(p, b"good\n", answer_moves))
    return result


async def _first_state(reader: asyncio.StreamReader) -> bool:
    line = await reader.readline()
    return line not in (b"", b"gameover\n")


async def test_an_answer_split_across_two_writes_forfeits() -> None:
    async def split(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await _first_state(reader):
            writer.write(b"0,")
            await writer.drain()
            await asyncio.sleep(0.1)
            writer.write(b"0\n")
    result = await forfeit_match(split)
    bad = result.names.index("bad")
    assert result.forfeit == bad and result.winner == 1 - bad
    assert "newline" in result.reason


async def test_a_slow_answer_forfeits() -> None:
    async def slow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await _first_state(reader):
            await asyncio.sleep(0.5)
            writer.write(b"0,0\n")
    result = await forfeit_match(slow, timeout=0.2)
    assert result.forfeit == result.names.index("bad")


@pytest.mark.parametrize("answer", [b"9,9\n", b"hello\n", b"0,0"])
async def test_a_bad_answer_forfeits(answer: bytes) -> None:
    async def bad(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await _first_state(reader):
            writer.write(answer)
    result = await forfeit_match(bad)
    assert result.forfeit == result.names.index("bad")


async def test_a_player_that_hangs_up_forfeits_and_both_sides_get_gameover(tmp_path: Path) -> None:
    async def leave(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _first_state(reader)
        writer.close()

    got: list[bytes] = []

    async def good(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            line = await reader.readline()
            got.append(line)
            if not line or line == b"gameover\n":
                return
            writer.write(b"0,0\n")

    log = tmp_path / "f.log"
    arena = Arena(port=0, seed=5, answer_timeout=0.5, log_path=log)
    result, _ = await run(arena, lambda p: raw_client(p, b"bad\n", leave), lambda p: raw_client(p, b"good\n", good))
    bad = result.names.index("bad")
    assert result.forfeit == bad
    assert got[-1] == b"gameover\n"
    text = log.read_text()
    assert f"# Player {bad} timeout/bad command" in text
    assert text.rstrip().endswith(f"# Winner: player {1 - bad} (good)")


async def test_no_name_in_time_means_no_match() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()

    async def patient(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        return None

    async def second(port: int) -> list[bytes]:
        await asyncio.sleep(0.05)
        return await raw_client(port, b"second\n", patient)

    arena = Arena(port=0, seed=1, answer_timeout=0.3)
    result, outcomes = await run(arena, lambda p: raw_client(p, None, silent), second)
    assert not result.played and "name" in result.reason
    assert outcomes[1] == [b""]  # the other agent's connection just drops: no gameover without a match


async def test_only_two_connections_are_taken() -> None:
    arena = Arena(port=0, seed=2, answer_timeout=0.3)
    task = asyncio.create_task(arena.serve())
    await arena.listening.wait()
    players = [asyncio.create_task(raw_client(arena.port, b"p%d\n" % i, answer_moves)) for i in range(2)]
    await asyncio.sleep(0.2)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", arena.port)
        writer.write(b"third\n")
        data = await asyncio.wait_for(reader.read(), 5)
        writer.close()
        assert b"," not in data  # no state ever reaches a third agent
    except ConnectionError:
        pass
    result = await asyncio.wait_for(task, 30)
    await asyncio.gather(*players)
    assert set(result.names) == {"p0", "p1"}


async def test_same_seed_same_match() -> None:
    async def one() -> ArenaResult:
        arena = Arena(port=0, seed=99)
        result, _ = await run(arena, lambda p: play("127.0.0.1", p, "a", make_bot("example", 1)),
                              lambda p: play("127.0.0.1", p, "b", make_bot("example", 1)))
        return result
    first, second = await one(), await one()
    # Both bots draw the same numbers, so which connection got which seat does not matter.
    assert first.turns == second.turns and sorted(first.scores) == sorted(second.scores)


# Python 3.12.1 made Server.wait_closed() wait for every open connection: an arena that waits for its
# server before hanging up on the players never returns (the hive tests hung until pytest's time-out).
# These fail within seconds instead.

@pytest.mark.timeout(15)
async def test_serve_returns_at_once_when_the_match_ends_while_players_stay_connected() -> None:
    received: dict[str, bytes] = {}

    def stay(name: str, answer: bytes) -> Script:
        async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while await _first_state(reader):
                writer.write(answer)
            received[name] = await reader.read()  # never hangs up itself: waits for the arena's EOF
        return script

    arena = Arena(port=0, seed=5, answer_timeout=0.3)
    async with asyncio.timeout(5):
        task = asyncio.create_task(arena.serve())
        await arena.listening.wait()
        players = [asyncio.create_task(raw_client(arena.port, b"bad\n", stay("bad", b"9,9\n"))),
                   asyncio.create_task(raw_client(arena.port, b"good\n", stay("good", b"0,0\n")))]
        result = await task
        await asyncio.gather(*players)
    assert result.played and result.forfeit == result.names.index("bad")
    assert received == {"bad": b"", "good": b""}  # both connections were closed by the arena


@pytest.mark.timeout(15)
async def test_serve_returns_at_once_when_no_match_starts() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()

    arena = Arena(port=0, seed=1, answer_timeout=0.3)
    async with asyncio.timeout(5):
        task = asyncio.create_task(arena.serve())
        await arena.listening.wait()
        player = asyncio.create_task(raw_client(arena.port, None, silent))
        result = await task
        assert await player == [b""]
    assert not result.played
