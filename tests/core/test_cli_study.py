"""The study flags every game gets: --version, --tag, --check-llm, shipped configs by name."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent.cli import main, prepare
from agent.core.config import GameConfig
from agent.core.llm_check import check_llm
from agent.core.resources import find_shipped_config, shipped_configs
from agent.core.study import agent_version
from agent.core.testing.fake_openai import FakeOpenAI, FakeReply

ROOT = Path(__file__).resolve().parents[2]


def test_version_prints_the_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0 and capsys.readouterr().out.strip() == f"tangram-agent {agent_version()}"


def test_tags_from_command_line_override_the_config(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("tags:\n  condition: explain\n")
    _, config, _ = prepare(["--config", str(path), "--tag", "participant=P07", "--tag", "condition=silent"])
    assert config.tags == {"condition": "silent", "participant": "P07"}


def test_malformed_tag_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        prepare(["--tag", "participant"])
    assert info.value.code == 2 and "is not KEY=VALUE" in capsys.readouterr().err


def test_invalid_tag_name_is_one_config_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--tag", "9lives=x"]) == 2
    assert capsys.readouterr().err.startswith("error: --tag: ")


def test_shipped_configs_are_found_by_name() -> None:
    names = {p.stem for p in shipped_configs()}
    assert {"gpt4o", "offline", "ollama"} <= names
    for spelling in ("gpt4o", "gpt4o.yaml", "configs/gpt4o.yaml"):
        assert find_shipped_config(spelling) == ROOT / "configs" / "gpt4o.yaml"
    assert find_shipped_config("nope") is None
    _, config, _ = prepare(["--config", "offline"])
    assert config.source == (ROOT / "configs" / "offline.yaml").resolve()


async def test_check_llm_reports_success(fake_openai: FakeOpenAI) -> None:
    config = GameConfig.model_validate({"player": "llm", "llm": {"base_url": fake_openai.base_url,
                                                                 "api_key_required": False, "model": "m-x"}})
    outcome = await check_llm(config)
    assert outcome.ok and outcome.message.startswith(f"LLM check passed: model 'm-x' at {fake_openai.base_url}")
    assert len(fake_openai.chat_requests) == 1 and fake_openai.chat_requests[0].json["max_tokens"] <= 16


async def test_check_llm_reports_the_exact_failure_after_one_request(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue(FakeReply.http_error(404, "The model `m-x` does not exist"))
    config = GameConfig.model_validate({"player": "llm", "llm": {"base_url": fake_openai.base_url,
                                                                 "api_key_required": False, "model": "m-x"}})
    outcome = await check_llm(config)
    assert not outcome.ok and "404" in outcome.message and "does not exist" in outcome.message
    assert len(fake_openai.chat_requests) == 1


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    return subprocess.run([sys.executable, "-m", "agent", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=60, check=False)


def test_check_llm_failure_stops_before_serving(tmp_path: Path) -> None:
    with FakeOpenAI() as fake:
        fake.enqueue(FakeReply.http_error(401, "Incorrect API key provided"))
        (tmp_path / "c.yaml").write_text(f"player: llm\nllm:\n  base_url: {fake.base_url}\n"
                                         "  api_key_required: false\n")
        res = _run(["--config", "c.yaml", "--check-llm", "--port", "0"], tmp_path)
    assert res.returncode == 2
    assert "error: LLM check failed" in res.stderr and "401" in res.stderr and "listening" not in res.stderr


def test_check_llm_without_an_llm_player_says_so_and_goes_on(capsys: pytest.CaptureFixture[str]) -> None:
    from agent.cli import _check_llm

    assert _check_llm(GameConfig()) == 0
    assert "LLM check skipped: the tangram player 'offline' uses no LLM" in capsys.readouterr().err
