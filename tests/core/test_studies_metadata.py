"""Study-grade records: scopes, texts written once, tags, metadata and config hashes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agent.core.config import ConfigError, GameConfig, apply_tags, load_config, validate_config
from agent.core.prompts import PromptError, load_prompts
from agent.core.studies.metadata import config_hash, effective_config, source_revision, study_metadata, templates_hash
from agent.core.transcript import Transcript, current_scope, record_scope, tags_in_name


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_scope_fields_reach_records_made_inside_and_in_tasks_started_there(tmp_path: Path) -> None:
    t = Transcript(tmp_path)
    await t.open()

    async def deep() -> None:  # e.g. a player recording its LLM call without knowing the turn
        t.record("llm", purpose="play")

    with record_scope(turn=3):
        t.record("decision")
        await asyncio.create_task(deep())
        with record_scope(request=7):
            t.record("chat_reply", turn=4)  # a record's own field wins
        assert current_scope() == {"turn": 3}
    t.record("frame_in")
    await t.close()
    recs = _records(t.path)
    assert [(r["kind"], r.get("turn"), r.get("request")) for r in recs] == [
        ("decision", 3, None), ("llm", 3, None), ("chat_reply", 4, 7), ("frame_in", None, None)]


async def test_scopes_of_concurrent_tasks_do_not_mix(tmp_path: Path) -> None:
    t = Transcript(tmp_path)
    await t.open()

    async def turn(n: int) -> None:
        with record_scope(turn=n):
            await asyncio.sleep(0)
            t.record("decision", n=n)

    await asyncio.gather(*(turn(n) for n in range(20)))
    await t.close()
    assert all(r["turn"] == r["n"] for r in _records(t.path))


async def test_text_once_writes_a_text_the_first_time_then_only_its_hash(tmp_path: Path) -> None:
    t = Transcript(tmp_path)
    await t.open()
    first = t.text_once("system_prompt", "You are a helpful partner.")
    again = t.text_once("system_prompt", "You are a helpful partner.")
    other = t.text_once("system_prompt", "Another prompt.")
    await t.close()
    assert first == again != other and len(first) == 16
    recs = _records(t.path)
    assert [(r["kind"], r["sha256"]) for r in recs] == [("system_prompt", first), ("system_prompt", other)]
    assert recs[0]["text"] == "You are a helpful partner."


def test_tags_appear_in_the_file_name_sorted_and_safe(tmp_path: Path) -> None:
    t = Transcript(tmp_path, "abc123", tags={"participant": "P07", "condition": "explain/v2 x"})
    assert t.path is not None
    assert t.path.name.endswith("-condition=explain-v2-x_participant=P07-abc123.jsonl")
    assert Transcript(tmp_path, "abc123").path.name.count("-") == 1  # no tags: stamp-session
    assert len(tags_in_name({f"k{i}": "v" * 90 for i in range(20)})) <= 80


def test_tags_from_config_and_command_line(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("tags:\n  condition: explain\n  wave: 2\n")
    config = load_config(path, GameConfig)
    assert config.tags == {"condition": "explain", "wave": "2"}
    merged = apply_tags(config, {"participant": "P07", "condition": "silent"})
    assert merged.tags == {"condition": "silent", "wave": "2", "participant": "P07"}
    with pytest.raises(ConfigError, match="tag name"):
        apply_tags(config, {"bad key!": "x"})


@pytest.mark.parametrize("text", ["tags: [a, b]", "tags:\n  '1x': a", "tags:\n  a: {b: c}", "tags:\n  a: " + "x" * 101])
def test_bad_tags_are_config_errors_naming_the_field(tmp_path: Path, text: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text + "\n")
    with pytest.raises(ConfigError, match="field 'tags"):
        load_config(path, GameConfig)


def test_every_config_error_at_once_with_did_you_mean(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("playr: llm\nllm:\n  modle: x\n  temperature: 9\n  retry:\n    max_atempts: 2\nzzz: 1\n")
    with pytest.raises(ConfigError) as info:
        load_config(path, GameConfig)
    message = str(info.value)
    assert message.startswith(f"config {path} has 5 problems:")
    assert "field 'playr': unknown field (did you mean 'player'?)" in message
    assert "field 'llm.modle': unknown field (did you mean 'llm.model'?)" in message
    assert "field 'llm.retry.max_atempts': unknown field (did you mean 'llm.retry.max_attempts'?)" in message
    assert "field 'llm.temperature': Input should be less than or equal to 2" in message
    assert "field 'zzz': unknown field\n" in message + "\n"  # no guess when nothing is close


def test_one_config_error_stays_one_line() -> None:
    with pytest.raises(ConfigError) as info:
        validate_config(GameConfig, {"log_level": "LOUD"}, None)
    assert "\n" not in str(info.value) and "field 'log_level'" in str(info.value)


def test_undefined_template_variable_names_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "x.j2").write_text("first\n{{ known }}\n\nfourth {{ unknown_thing }}\n")
    with pytest.raises(PromptError) as info:
        load_prompts(tmp_path, {"known": 1}, ["x"])
    assert f"{tmp_path / 'x.j2'}:4" in str(info.value) and "unknown_thing" in str(info.value)


def test_config_hash_ignores_secrets_tags_and_path_but_not_settings(monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value-1")
    base = GameConfig.model_validate({"player": "llm", "tags": {"p": "1"}})
    other_tags = base.model_copy(update={"tags": {"p": "2"}, "source": tmp_path / "x.yaml"})
    assert config_hash(base) == config_hash(other_tags)
    warmer = base.model_copy(update={"llm": base.llm.model_copy(update={"temperature": 0.9})})
    assert config_hash(warmer) != config_hash(base)
    assert "sk-secret-value-1" not in json.dumps(effective_config(base))


def test_config_hash_masks_token_fields() -> None:
    class WithToken(GameConfig):
        token: str | None = None

    a = WithToken(token="tok-aaaa")
    b = WithToken(token="tok-bbbb")
    assert effective_config(a)["token"] == "***" and config_hash(a) == config_hash(b)


def test_templates_hash_changes_with_any_template(tmp_path: Path) -> None:
    (tmp_path / "a.j2").write_text("A")
    first = templates_hash(tmp_path)
    (tmp_path / "a.j2").write_text("B")
    assert templates_hash(tmp_path) != first and templates_hash(tmp_path / "missing") is None


def test_study_metadata_fields(tmp_path: Path) -> None:
    (tmp_path / "system.j2").write_text("hi")
    config = GameConfig.model_validate({"player": "llm", "tags": {"condition": "explain"},
                                        "llm": {"model": "m-1", "api_key_required": False}})
    meta = study_metadata(config, tmp_path)
    assert meta["game"] == "tangram" and meta["player_kind"] == "llm" and meta["model"] == "m-1"
    assert meta["tags"] == {"condition": "explain"} and meta["templates_sha256"] == templates_hash(tmp_path)
    assert meta["config_sha256"] == config_hash(config) and meta["agent_version"]
    offline = study_metadata(GameConfig())
    assert offline["model"] is None and offline["templates_sha256"] is None


def test_source_revision_reads_a_checkout(tmp_path: Path) -> None:
    git = tmp_path / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "refs" / "heads" / "main").write_text("a" * 40 + "\n")
    assert source_revision(tmp_path) == "a" * 40
    assert source_revision(tmp_path / "nowhere") is None
