"""What a study reads from a Forge transcript: the run's metadata and tags, turn ids that join a
decision to its LLM call, and tables the analysis fills (agent.analyze, no pandas needed)."""

from __future__ import annotations

import json
from pathlib import Path

from agent.analyze.tables import build_tables, find_transcripts, read_transcript
from agent.cli import prepare
from agent.core.studies.metadata import config_hash, templates_hash
from agent.core.testing.fake_openai import FakeOpenAI, FakeReply
from agent.games.forge.fake.catalogue import catalogue
from agent.games.forge.fake.client import FakeForge
from agent.games.forge.fake.engine import Game
from agent.games.forge.fake.llm import sensible

from .conftest import forge_config, running

LAND = dict(catalogue())["turn 3: land before spells"]
BOLT = dict(catalogue())["target: Bolt kills what it can"]


def test_tags_on_the_command_line_reach_the_forge_config() -> None:
    _, config, _ = prepare(["--game", "forge", "--tag", "participant=P07", "--tag", "condition=llm"])
    assert config.tags == {"participant": "P07", "condition": "llm"}


async def test_a_forge_game_gives_metadata_tags_turn_ids_and_analysis_tables(tmp_path: Path) -> None:
    async with FakeOpenAI(responder=sensible(seed=3)) as fake:
        config = forge_config(tmp_path, fake, tags={"condition": "llm", "participant": "P01"})
        async with running(config) as (_, url), FakeForge(url) as forge:
            report = await forge.play(Game(4, max_turns=4))
    assert report.invalid() == [] and len(report.decisions) >= 3

    (path,) = find_transcripts(tmp_path / "transcripts")
    assert "condition=llm_participant=P01" in path.name
    records = [json.loads(line) for line in path.read_text().splitlines()]
    start = records[0]
    assert start["kind"] == "session_start"
    assert start["game"] == "forge" and start["player_kind"] == "llm" and start["model"] == "fake-model"
    assert start["tags"] == {"condition": "llm", "participant": "P01"}
    assert start["config_sha256"] == config_hash(config)
    assert start["templates_sha256"] == templates_hash(config.prompts_dir) is not None
    assert start["agent_version"]

    decisions = [r for r in records if r["kind"] == "decision"]
    calls = [r for r in records if r["kind"] == "llm"]
    ends = [r for r in records if r["kind"] == "turn_end"]
    assert [d["turn"] for d in decisions] == list(range(1, len(decisions) + 1))
    assert [e["turn"] for e in ends] == [d["turn"] for d in decisions]
    assert {c["turn"] for c in calls} == {d["turn"] for d in decisions}
    assert all(c["outcome"] == "ok" and c["elapsed_s"] >= 0 and c["purpose"] == "decide" for c in calls)
    prompts = [r for r in records if r["kind"] == "system_prompt"]
    assert len(prompts) == 1 and all(c["system_sha256"] == prompts[0]["sha256"] for c in calls)
    assert records[-1]["kind"] == "session_end" and records[-1]["reason"] == "reflect"

    tables = build_tables([read_transcript(path)], {})
    (session,) = tables.sessions
    assert session["game"] == "forge" and session["tag_condition"] == "llm" and session["end_reason"] == "reflect"
    assert session["turns"] == len(decisions) and session["llm_calls"] == len(calls) > 0
    assert len(tables.turns) == len(decisions) and all(t["llm_calls"] == 1 for t in tables.turns)
    assert all(row["turn"] is not None for row in tables.llm_calls)


async def test_llm_calls_that_fail_or_run_out_of_time_are_recorded_in_their_turn(fake_openai: FakeOpenAI,
                                                                                  tmp_path: Path) -> None:
    fake_openai.enqueue(FakeReply.stall(2.0, content=json.dumps({"index": 0, "reason": "too late"})),
                        FakeReply.http_error(500, "provider down"))
    config = forge_config(tmp_path, fake_openai, decision={"deadline": 0.3})
    async with running(config) as (_, url), FakeForge(url) as forge:
        await forge.send({**LAND, "gameId": "slow"})
        await forge.send({**BOLT, "gameId": "slow"})
    (path,) = find_transcripts(tmp_path / "transcripts")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    calls = [r for r in records if r["kind"] == "llm"]
    assert [(c["turn"], c["outcome"]) for c in calls] == [(1, "timeout"), (2, "error")]
    assert calls[0]["elapsed_s"] >= 0.3 and calls[0]["model"] == "fake-model" and calls[0]["prompt_tokens"] == 0
    ends = [r for r in records if r["kind"] == "turn_end"]
    assert [(e["turn"], e["outcome"]) for e in ends] == [(1, "heuristic-after-llm"), (2, "heuristic-after-llm")]
