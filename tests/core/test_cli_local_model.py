"""``--local-model``: which config it plays, what it changes in it, and its refusals (no server is
started here; tests/llm_real runs the command end to end with the [local] extra)."""

from __future__ import annotations

import pytest

from agent.cli import main, prepare
from agent.core.local_model import MODEL_ALIAS


@pytest.mark.parametrize("argv, config_name", [
    (["--local-model"], "local.yaml"),
    (["--local-model", "--game", "forge"], "forge-local.yaml"),
    (["--local-model", "--game", "boardgame"], "boardgame-local.yaml"),
    (["--local-model", "--game", "hive"], "hive-local.yaml"),
    (["--local-model", "--config", "configs/gpt4o.yaml"], "gpt4o.yaml"),
])
def test_it_plays_the_games_local_config_on_a_loopback_port_with_no_key(
        argv: list[str], config_name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # gpt4o.yaml needs none once on the local model
    game, config, _ = prepare(argv)
    assert config.source is not None and config.source.name == config_name
    assert config.player == "llm" and config.llm.model == MODEL_ALIAS and not config.llm.api_key_required
    host, port = str(config.llm.base_url).removeprefix("http://").removesuffix("/v1").split(":")
    assert host == "127.0.0.1" and 1024 <= int(port) <= 65535


def test_an_offline_config_is_refused_with_the_way_out(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", "configs/offline.yaml", "--local-model"]) == 2
    err = capsys.readouterr().err
    assert "--local-model needs an LLM player" in err and "configs/local.yaml" in err


def test_the_local_server_generates_on_all_cores_but_one_and_reads_the_prompt_on_all(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from pathlib import Path

    from agent.core.local_model import server_command

    monkeypatch.setattr("os.cpu_count", lambda: 2)
    python = server_command("llama-cpp-python", Path("m.gguf"), 8080, 8192, None)
    assert python[python.index("--n_threads") + 1] == "1" and python[python.index("--n_threads_batch") + 1] == "2"
    monkeypatch.setenv("LLAMA_SERVER", "/opt/llama-server")
    native = server_command("llama-server", Path("m.gguf"), 8080, 8192, 3)
    assert native[0] == "/opt/llama-server"
    assert native[native.index("--threads") + 1] == "3" and native[native.index("--threads-batch") + 1] == "3"
    monkeypatch.setattr("os.cpu_count", lambda: None)
    single = server_command("llama-cpp-python", Path("m.gguf"), 8080, 8192, None)
    assert single[single.index("--n_threads") + 1] == "1" and single[single.index("--n_threads_batch") + 1] == "1"


def test_the_threads_for_the_cores_the_model_gets_beside_the_game_come_from_the_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from pathlib import Path

    from agent.core.local_model import THREADS_ENV, server_command, threads_from_env

    assert threads_from_env("1") == (1, 1) and threads_from_env("1,2") == (1, 2)
    assert threads_from_env("") is None and threads_from_env("0") is None and threads_from_env("a,1") is None
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    monkeypatch.setenv(THREADS_ENV, "1,1")  # beside Chromium's software rendering on 2 cores
    python = server_command("llama-cpp-python", Path("m.gguf"), 8080, 8192, None)
    assert python[python.index("--n_threads") + 1] == "1" and python[python.index("--n_threads_batch") + 1] == "1"
