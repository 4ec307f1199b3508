"""The study flags every game gets: --version, --tag, --check-llm, shipped configs by name."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agent.cli import main, prepare
from agent.core.config import GameConfig
from agent.core.llm.check import check_llm
from agent.core.resources import find_shipped_config, shipped_configs
from agent.core.studies.metadata import agent_version
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


def _llm_config(fake: FakeOpenAI, **llm: object) -> GameConfig:
    return GameConfig.model_validate({"player": "llm", "llm": {"base_url": fake.base_url, "api_key_required": False,
                                                               "model": "m-x", **llm}})


def _tangram_sample(config: GameConfig):  # type: ignore[no-untyped-def]
    from agent.games.tangram.config import Config
    from agent.games.tangram.llm_player.sample import llm_sample

    return llm_sample(Config.model_validate({"player": "llm", "llm": {**config.llm.model_dump(), "candidates": 2}}))


async def test_check_llm_sends_the_games_own_request_and_reports_a_table(fake_openai: FakeOpenAI) -> None:
    config = _llm_config(fake_openai)
    outcome = await check_llm(config, _tangram_sample(config))
    assert outcome.ok, outcome.message
    rows = dict(outcome.rows)
    assert rows["structured output"] == "json_schema" and rows["images"] == "accepted and seen"
    assert rows["system role"] == "kept" and rows["found by"] == "probed"
    assert "counted for about" in rows["prompt tokens"]
    assert outcome.message.splitlines()[-1].startswith("LLM check passed")
    (sent,) = fake_openai.chat_requests
    assert sent.json["response_format"]["json_schema"]["name"] == "tangram_move"  # the play schema itself
    assert len(sent.image_urls()) == 2  # board and drawer, as play sends them
    system, user = sent.messages
    assert re.search(r"Check word A: K[0-9a-f]{6}\.$", system["content"])
    assert re.search(r"B: Q[0-9a-f]{6}\)", " ".join(p.get("text", "") for p in user["content"]))


async def test_check_llm_tells_the_window_and_sends_the_compact_form_where_the_full_one_does_not_fit() -> None:
    from agent.core.testing.fake_openai import FakeOpenAI as Fake

    with Fake(context_window=2400, tells_window=True) as fake:
        config = _llm_config(fake)
        sample = _tangram_sample(config)
        outcome = await check_llm(config, sample)
        rows = dict(outcome.rows)
        assert rows["context window"] == "2,400 tokens: the full prompt does not fit, its compact form is sent"
        (sent,) = fake.chat_requests
        assert "Checked candidates" in sent.messages[1]["content"][0]["text"], "the compact play prompt"
        assert "HOW YOU COLLABORATE" not in str(sent.messages[0]["content"])


async def test_check_llm_on_llama_server_sends_and_tells_our_own_grammar() -> None:
    from agent.core.testing.fake_openai import FakeOpenAI as Fake

    with Fake(context_window=8192, llama_props=True) as fake:
        config = _llm_config(fake)
        outcome = await check_llm(config, _tangram_sample(config))
        assert outcome.ok, outcome.message
        rows = dict(outcome.rows)
        assert rows["structured output"] == ("json_schema, sent as our own grammar "
                                             "(llama-server: no whitespace runs)")
        (sent,) = fake.chat_requests
        assert "response_format" not in sent.json and sent.json["grammar"].startswith("root ::= ")
        assert rows["server"] == "llama-server"


async def test_check_llm_on_llama_cpp_python_tells_it_answers_one_request_at_a_time() -> None:
    from agent.core.testing.fake_openai import FakeOpenAI as Fake

    with Fake(llama_cpp_python=True) as fake:
        config = _llm_config(fake)
        outcome = await check_llm(config, _tangram_sample(config))
        assert outcome.ok, outcome.message
        assert dict(outcome.rows)["server"].startswith("llama-cpp-python: one request at a time")
    with Fake() as fake:
        outcome = await check_llm(_llm_config(fake), None)
        assert outcome.ok and "server" not in dict(outcome.rows)


async def test_check_llm_tells_a_server_that_drops_what_play_sends(fake_openai: FakeOpenAI) -> None:
    fake_openai.drops_parts = fake_openai.drops_system = True
    config = _llm_config(fake_openai)
    outcome = await check_llm(config, _tangram_sample(config))
    assert outcome.ok, outcome.message  # play can go on: in a dialect that carries the prompt
    rows = dict(outcome.rows)
    assert rows["content"].startswith("plain strings") and rows["images"].startswith("not seen")
    assert rows["system role"].startswith("folded")


async def test_check_llm_fails_with_the_fix_when_the_prompt_is_cut(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue(FakeReply.ok_json({"ok": True}, prompt_tokens=40))
    config = _llm_config(fake_openai)
    outcome = await check_llm(config, _tangram_sample(config))
    assert not outcome.ok
    assert "LLM check failed" in outcome.message and "context window" in outcome.message
    assert "num_ctx" in outcome.message


async def test_check_llm_reports_the_exact_failure(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue(FakeReply.http_error(404, "The model `m-x` does not exist"))
    outcome = await check_llm(_llm_config(fake_openai), None)
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
    from agent.games import load_game

    assert _check_llm(load_game("tangram"), GameConfig()) == 0
    assert "LLM check skipped: the tangram player 'offline' uses no LLM" in capsys.readouterr().err


def test_a_bad_study_stops_the_agent_with_one_line_before_anything_listens(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("name: s\ndesign: within\nconditions: {explain: {}, silent: {}}\norder: [silent, explain]\n")
    assert main(["--study", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == f"error: study {path}: field 'order': only a fixed design takes an order (this one is within)\n"
    assert not (tmp_path / "s.db").exists()


def test_study_and_config_do_not_go_together(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--study", str(ROOT / "configs" / "study-example.yaml"), "--config", "offline"]) == 2
    assert "--study and --config do not go together" in capsys.readouterr().err


def test_a_checked_study_goes_to_the_games_study_hook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse
    import dataclasses

    import agent.cli
    from agent.core.studies.run import StudyRun

    seen: dict[str, object] = {}

    async def serve_study(run: StudyRun, args: argparse.Namespace) -> int:
        await run.next_participant("P01")
        assignment = await run.current()
        assert assignment is not None
        seen.update(condition=assignment.condition, tags=dict(assignment.config.tags), store=run.study.store)
        return 0

    tangram = agent.cli.load_game("tangram")
    fake = dataclasses.replace(tangram, serve_study=serve_study)
    monkeypatch.setattr(agent.cli, "load_game", lambda name: fake)
    path = tmp_path / "s.yaml"
    path.write_text("name: s\ndesign: within\nconditions: {explain: {config: offline}, silent: {config: offline}}\n")
    assert main(["--study", str(path), "--tag", "wave=2", "--port", "0"]) == 0
    assert seen == {"condition": "explain", "store": tmp_path / "s.db",
                    "tags": {"wave": "2", "participant": "P01", "condition": "explain", "order": "1"}}


def test_without_the_games_hook_a_checked_study_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Tangram serves studies (its serve_study hook); a game without the hook (hive) says so after the checks.
    path = tmp_path / "s.yaml"
    path.write_text("name: h\ndesign: within\ngame: hive\nconditions:\n  a: {}\n  b: {}\n")
    assert main(["--study", str(path)]) == 2
    assert "the hive game cannot serve a study yet" in capsys.readouterr().err
    assert not (tmp_path / "s.db").exists()  # refused before the database was made


def test_tangram_has_the_games_hook() -> None:
    from agent.games import load_game

    assert load_game("tangram").serve_study is not None
