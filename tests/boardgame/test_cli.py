"""The commands a user types: the engine as a process, and ``python -m agent --game boardgame``."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from agent.cli import main as cli_main
from tests.boardgame.support import running_engine

ROOT = Path(__file__).resolve().parents[2]


async def agent_process(*argv: str, cwd: Path) -> asyncio.subprocess.Process:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("OPENAI_API_KEY", None)
    return await asyncio.create_subprocess_exec(sys.executable, "-m", "agent", "--game", "boardgame", *argv,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                env=env, cwd=cwd)


async def finish(process: asyncio.subprocess.Process, timeout: float = 60) -> tuple[int, str, str]:
    out, err = await asyncio.wait_for(process.communicate(), timeout)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_the_agent_command_plays_a_match_and_prints_one_line(tmp_path: Path) -> None:
    config = tmp_path / "bg.yaml"
    config.write_text(f"game: boardgame\ntranscripts:\n  dir: {tmp_path / 'transcripts'}\n", encoding="utf-8")
    async with running_engine(games=("tictactoe",), bot="strong", seed=1) as (_engine, url):
        process = await agent_process("--config", str(config), "--connect", url, "--agent-id", "A",
                                      "--log-level", "WARNING", cwd=tmp_path)
        status, out, err = await finish(process)
    lines = out.strip().splitlines()
    assert status == 0 and len(lines) == 1, err
    assert lines[0].startswith("tictactoe match m-") and "DRAW for A (X)" in lines[0]
    records = [json.loads(line) for f in (tmp_path / "transcripts").glob("*.jsonl") for line in f.open()]
    kinds = [r["kind"] for r in records]
    assert "match_created" in kinds and kinds[-2:] == ["result", "session_end"]
    sent = [json.loads(r["frame"]) for r in records if r["kind"] == "frame_out"]
    assert [f["type"] for f in sent[:2]] == ["create_match", "get_state"]
    assert any(r["kind"] == "frame_in" and '"push_event"' in r["frame"] for r in records)


async def test_the_agent_command_joins_a_match(tmp_path: Path) -> None:
    async with running_engine(games=("connect_four",), bot="none", seed=1) as (engine, url):
        host = await agent_process("--connect", url, "--agent-id", "A", "--opponent", "none",
                                   "--search-seconds", "0.02", "--log-level", "WARNING", cwd=tmp_path)
        # The host's start-up (a Python process importing the agent) is what we wait for: bounded by
        # its own exit or a minute, not by a count of polls that a loaded machine can outlast.
        deadline = asyncio.get_running_loop().time() + 60
        while not (matches := engine.match_ids()) and host.returncode is None:
            assert asyncio.get_running_loop().time() < deadline, "the host created no match within 60 s"
            await asyncio.sleep(0.02)
        assert matches, f"the host exited ({host.returncode}) without creating a match"
        guest = await agent_process("--connect", url, "--agent-id", "B", "--match", matches[0],
                                    "--search-seconds", "0.02", "--log-level", "WARNING", cwd=tmp_path)
        (host_status, host_out, _), (guest_status, guest_out, _) = await asyncio.gather(finish(host), finish(guest))
    assert host_status == guest_status == 0
    assert f"connect_four match {matches[0]}" in host_out and f"connect_four match {matches[0]}" in guest_out


async def test_sigterm_leaves_the_match_flushes_the_transcript_and_exits_130(tmp_path: Path) -> None:
    config = tmp_path / "bg.yaml"
    config.write_text(f"game: boardgame\ntranscripts:\n  dir: {tmp_path / 't'}\n", encoding="utf-8")
    async with running_engine(games=("tictactoe",), bot="strong", bot_delay=30) as (engine, url):
        process = await agent_process("--config", str(config), "--connect", url, "--agent-id", "A", "--seat", "2",
                                      cwd=tmp_path)
        for _ in range(500):
            if engine.match_ids():
                break
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.2)
        process.send_signal(signal.SIGTERM)
        status, out, err = await finish(process, 20)
    assert status == 130 and "interrupted" in err and out == ""
    kinds = [json.loads(line)["kind"] for f in (tmp_path / "t").glob("*.jsonl") for line in f.open()]
    assert kinds[-2:] == ["interrupted", "session_end"]


@pytest.mark.parametrize("argv, words", [
    (["--connect", "http://x"], "must start with ws:// or wss://"),
    (["--board-game", "chess"], "not a game this agent knows"),
    (["--agent-id", ""], "engine.agent_id"),
])
def test_bad_flags_stop_at_start_up_with_one_line(argv: list[str], words: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["--game", "boardgame", *argv]) == 2
    assert words in capsys.readouterr().err


def test_an_llm_config_without_a_key_stops_at_start_up(capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(ROOT)
    assert cli_main(["--config", str(ROOT / "configs" / "boardgame-llm.yaml")]) == 2
    assert "needs an API key" in capsys.readouterr().err


def test_the_shipped_configs_are_valid() -> None:
    from agent.core.config import load_config
    from agent.games.boardgame.config import BoardgameConfig

    for path in sorted((ROOT / "configs").glob("boardgame*.yaml")):
        config = load_config(path, BoardgameConfig)
        assert config.game == "boardgame"


async def test_the_engine_runs_as_a_process_and_stops_on_sigterm() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agent.games.boardgame.engine", "--game", "connect_four", "--port", "0",
        "--bot", "random", "--log-level", "WARNING", stdout=asyncio.subprocess.PIPE, env=env, cwd=ROOT)
    try:
        assert process.stdout is not None
        line = (await asyncio.wait_for(process.stdout.readline(), 20)).decode()
        assert "hosting connect_four (bot: random)" in line
        url = line.split()[3]
        from agent.games.boardgame.client import ClientSettings, MatchClient
        from agent.games.boardgame.players.offline import make_offline

        def player(rules: Any) -> Any:
            return make_offline("best", rules, seconds=0.02)
        result = await MatchClient(ClientSettings(url=url, agent_id="A"), player, player).play()
        assert result.outcome == "win"
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), 20) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


def test_the_engine_command_refuses_bad_flags() -> None:
    from agent.games.boardgame.engine.__main__ import parse_args

    with pytest.raises(SystemExit):
        parse_args(["--game", "chess"])
    with pytest.raises(SystemExit):
        parse_args(["--turn-timeout", "-1"])
