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


async def test_the_agent_command_plays_a_match_and_prints_one_line(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "bg.yaml"
    config.write_text(f"game: boardgame\ntranscripts:\n  dir: {tmp_path / 'transcripts'}\n", encoding="utf-8")
    async with running_engine(games=("tictactoe",), bot="strong", seed=1) as (_engine, url):
        status = await asyncio.to_thread(cli_main, ["--game", "boardgame", "--config", str(config), "--connect", url,
                                                    "--agent-id", "A", "--log-level", "WARNING"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert status == 0 and len(lines) == 1
    assert lines[0].startswith("tictactoe match m-") and "DRAW for A (X)" in lines[0]
    records = [json.loads(line) for f in (tmp_path / "transcripts").glob("*.jsonl") for line in f.open()]
    kinds = [r["kind"] for r in records]
    assert "match_created" in kinds and kinds[-1] == "result"


async def test_the_agent_command_joins_a_match(capsys: pytest.CaptureFixture[str]) -> None:
    async with running_engine(games=("connect_four",), bot="none", seed=1) as (engine, url):
        host = asyncio.create_task(asyncio.to_thread(
            cli_main, ["--game", "boardgame", "--connect", url, "--agent-id", "A", "--opponent", "none",
                       "--search-seconds", "0.02", "--log-level", "WARNING"]))
        for _ in range(200):
            matches = list(engine._matches)
            if matches:
                break
            await asyncio.sleep(0.02)
        guest = await asyncio.to_thread(cli_main, ["--game", "boardgame", "--connect", url, "--agent-id", "B",
                                                   "--match", matches[0], "--search-seconds", "0.02",
                                                   "--log-level", "WARNING"])
        assert await host == 0 and guest == 0
    out = capsys.readouterr().out
    assert out.count(f"connect_four match {matches[0]}") == 2


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
