"""``python -m agent --game hive`` end to end: a real process joins the local arena and plays."""

from __future__ import annotations

import asyncio
import socket
import sys
from pathlib import Path

import pytest

from agent.core.config import PROJECT_DIR, ConfigError
from agent.games import load_game
from agent.games.hive.arena import Arena
from agent.games.hive.game import parse_address
from agent.games.hive.link.client import play
from agent.games.hive.opponents.bots import make_bot


async def run_agent(*args: str, timeout: float = 60) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "agent", *args, cwd=PROJECT_DIR,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_the_agent_plays_a_match_and_prints_one_result_line(tmp_path: Path) -> None:
    log = tmp_path / "match.log"
    arena = Arena(port=0, log_path=log, seed=8)
    serving = asyncio.create_task(arena.serve())
    await arena.listening.wait()
    config = tmp_path / "c.yaml"
    config.write_text(f"game: hive\ntranscripts:\n  dir: {tmp_path / 'transcripts'}\n")
    agent = asyncio.create_task(run_agent("--config", str(config), "--connect", f"127.0.0.1:{arena.port}",
                                          "--team", "cli-bees", "--arena-log", str(log)))
    other = await play("127.0.0.1", arena.port, "example", make_bot("example", 3), connect_timeout=30)
    result = await serving
    code, out, err = await agent
    assert code == 0, err
    assert other.ending == "gameover" and result.forfeit is None
    lines = out.strip().splitlines()
    assert len(lines) == 1
    seat = result.names.index("cli-bees")
    assert f"team=cli-bees seat={seat} score={result.scores[seat]} " in lines[0]
    assert f"winner=player {result.winner} ({result.names[result.winner]})" in lines[0]  # type: ignore[index]
    assert len(list((tmp_path / "transcripts").glob("*.jsonl"))) == 1


async def test_no_arena_means_exit_1_with_a_reason(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = tmp_path / "c.yaml"
    config.write_text("game: hive\narena:\n  connect_timeout: 0.3\ntranscripts:\n  enabled: false\n")
    code, out, err = await run_agent("--config", str(config), "--connect", f"127.0.0.1:{port}")
    assert code == 1
    assert "seat=?" in out and "could not connect" in err


@pytest.mark.parametrize("args, words", [
    (["--game", "hive", "--connect", "localhost"], "HOST:PORT"),
    (["--game", "hive", "--connect", "127.0.0.1:99999"], "HOST:PORT"),
    (["--game", "hive", "--team", "a,b"], "--team"),
])
async def test_bad_flags_exit_2(args: list[str], words: str) -> None:
    code, _, err = await run_agent(*args)
    assert code == 2 and words in err


def test_parse_address() -> None:
    assert parse_address("127.0.0.1:8000") == ("127.0.0.1", 8000)
    assert parse_address("[::1]:8000") == ("::1", 8000)
    with pytest.raises(ConfigError):
        parse_address(":8000")


def test_the_game_is_registered() -> None:
    game = load_game("hive")
    assert game.name == "hive" and game.config_model().player == "offline"


def test_direct_mode_needs_the_llm_player() -> None:
    game = load_game("hive")
    config = game.config_model.model_validate({"direct": {"enabled": True}})
    with pytest.raises(ConfigError, match="player: llm"):
        game.check(config)


async def test_ctrl_c_leaves_the_arena_and_flushes_the_transcript(tmp_path: Path) -> None:
    import json
    import signal

    answered = asyncio.Event()

    async def arena(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readline()
        writer.write(b"0,0,0,10,2,9000050900000090000009001000900100090710009001000\n")
        await reader.read(200)
        answered.set()
        await reader.read()  # until the agent hangs up

    server = await asyncio.start_server(arena, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    config = tmp_path / "c.yaml"
    config.write_text(f"game: hive\ntranscripts:\n  dir: {tmp_path}\n")
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "agent", "--config", str(config),
                                                "--connect", f"127.0.0.1:{port}", cwd=PROJECT_DIR,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        await asyncio.wait_for(answered.wait(), 30)
        proc.send_signal(signal.SIGINT)
        _, err = await asyncio.wait_for(proc.communicate(), 30)
    finally:
        server.close()
    assert proc.returncode == 130, err
    files = await asyncio.to_thread(lambda: list(tmp_path.glob("*.jsonl")))
    records = [json.loads(line) for f in files for line in f.read_text().splitlines()]
    assert records[-1]["kind"] == "session_end" and records[-1]["reason"] == "interrupted"
