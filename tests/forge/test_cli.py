"""`python -m agent --game forge` as Forge meets it: a process that serves, decides, and stops cleanly."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from pathlib import Path

import pytest

from agent.core.config import ConfigError, load_config
from agent.games.forge.config import ForgeConfig
from agent.games.forge.fake.catalogue import catalogue
from agent.games.forge.fake.client import FakeForge
from agent.games.forge.game import apply_arguments, check

ROOT = Path(__file__).resolve().parents[2]


async def test_the_agent_process_serves_forge_and_stops_on_sigterm(tmp_path: Path) -> None:
    config = tmp_path / "forge.yaml"
    config.write_text(f"game: forge\ntranscripts:\n  dir: {tmp_path / 't'}\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agent", "--game", "forge", "--config", str(config), "--host", "127.0.0.1",
        "--port", "0", cwd=str(tmp_path), env=env, stderr=asyncio.subprocess.PIPE)
    assert proc.stderr is not None
    try:
        line = (await asyncio.wait_for(proc.stderr.readline(), 30)).decode()
        match = re.search(r"listening on (http://127\.0\.0\.1:\d+/decide)", line)
        assert match, line
        async with FakeForge(match.group(1)) as forge:
            assert await forge.health() == 200
            report = await forge.replay([body for _, body in catalogue("possible_actions")[:5]])
        assert report.invalid() == []
    finally:
        proc.send_signal(signal.SIGTERM)
        status = await asyncio.wait_for(proc.wait(), 20)
    assert status == 0
    lines = next((tmp_path / "t").glob("*.jsonl")).read_text().splitlines()
    assert len(lines) == 1 + 3 * 5 + 1  # start; turn_start, decision and turn_end each; end at shutdown


@pytest.mark.parametrize("name", ["forge.yaml", "forge-gpt4o.yaml"])
def test_shipped_configs_load(name: str) -> None:
    config = load_config(ROOT / "configs" / name, ForgeConfig)
    assert config.game == "forge" and config.server.port == 5005
    assert config.decision.deadline < 30
    assert (config.prompts_dir / "decide.j2").is_file()


def test_bad_configs_say_what_is_wrong(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("game: forge\ndecision:\n  deadline: 40\n")
    with pytest.raises(ConfigError, match=r"decision\.deadline"):
        load_config(path, ForgeConfig)
    path.write_text("game: forge\nserver:\n  prot: 5005\n")
    with pytest.raises(ConfigError, match=r"server\.prot"):
        load_config(path, ForgeConfig)


def test_flags_and_start_up_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse

    args = argparse.Namespace(host="0.0.0.0", port=6000, allow_remote=False, token="tok-123", deadline=3.0)
    config = apply_arguments(ForgeConfig(), args)
    assert (config.server.port, config.server.token, config.decision.deadline) == (6000, "tok-123", 3.0)
    assert "tok-123" in config.secret_values()
    with pytest.raises(ConfigError, match="--allow-remote"):
        check(config)
    with pytest.raises(ConfigError, match="--deadline 30"):
        apply_arguments(ForgeConfig(), argparse.Namespace(host=None, port=None, allow_remote=False, token=None,
                                                          deadline=30.0))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="needs an API key"):
        check(ForgeConfig(player="llm"))
