"""What a study reads from a Boardgame transcript: one per match, with the run's metadata and tags,
turn ids joining each turn's events, LLM calls and frames, and tables the analysis fills."""

from __future__ import annotations

import json
import random
from pathlib import Path

from agent.analyze.tables import build_tables, find_transcripts, read_transcript
from agent.cli import prepare
from agent.core.studies.metadata import config_hash, templates_hash
from agent.core.testing.fake_openai import FakeOpenAI, FakeReply
from agent.games.boardgame.config import BoardgameConfig
from agent.games.boardgame.runner import run
from agent.games.boardgame.testing import legal_responder
from tests.boardgame.support import running_engine

PROMPTS_DIR = Path(__file__).resolve().parents[2] / "prompts" / "boardgame"


def test_tags_on_the_command_line_reach_the_boardgame_config() -> None:
    _, config, _ = prepare(["--game", "boardgame", "--tag", "participant=P07", "--tag", "condition=llm"])
    assert config.tags == {"participant": "P07", "condition": "llm"}


async def test_a_match_gives_metadata_tags_turn_ids_and_analysis_tables(fake_openai: FakeOpenAI,
                                                                        tmp_path: Path) -> None:
    fake_openai.responder = legal_responder(random.Random(1))
    async with running_engine(games=("tictactoe",), bot="strong", seed=3) as (_engine, url):
        config = BoardgameConfig.model_validate({
            "game": "boardgame", "player": "llm", "prompts_dir": str(PROMPTS_DIR),
            "llm": {"base_url": fake_openai.base_url, "model": "fake-model", "api_key_required": False,
                    "request_timeout": 5, "retry": {"max_attempts": 1}},
            "engine": {"url": url, "agent_id": "A"}, "play": {"matches": 2, "search_seconds": 0.02},
            "transcripts": {"dir": str(tmp_path / "t")}, "tags": {"condition": "llm", "participant": "P01"}})
        assert await run(config) == 0

    paths = find_transcripts(tmp_path / "t")
    assert len(paths) == 2  # one transcript (one study session) per match
    for path in paths:
        assert "condition=llm_participant=P01" in path.name
        records = [json.loads(line) for line in path.read_text().splitlines()]
        start = records[0]
        assert start["kind"] == "session_start"
        assert start["game"] == "boardgame" and start["player_kind"] == "llm" and start["model"] == "fake-model"
        assert start["tags"] == {"condition": "llm", "participant": "P01"}
        assert start["config_sha256"] == config_hash(config)
        assert start["templates_sha256"] == templates_hash(PROMPTS_DIR) is not None
        assert records[-1]["kind"] == "session_end" and records[-1]["reason"] in ("win", "loss", "draw")

        ends = [r for r in records if r["kind"] == "turn_end"]
        turn_ids = [r["turn"] for r in ends]
        assert turn_ids == list(range(1, len(ends) + 1)) and len(ends) >= 3
        assert all(r["outcome"] == "played" and r["seconds"] >= 0 for r in ends)
        calls = [r for r in records if r["kind"] == "llm"]
        assert [c["turn"] for c in calls] == turn_ids  # a legal answer each turn: one call per turn
        assert all(c["outcome"] == "ok" and c["elapsed_s"] >= 0 and c["purpose"] == "move" for c in calls)
        prompts = [r for r in records if r["kind"] == "system_prompt"]
        # Each distinct system prompt once (its example move follows the board), then named by hash.
        assert sorted(r["sha256"] for r in prompts) == sorted({c["system_sha256"] for c in calls})
        moves = [json.loads(r["frame"]) for r in records if r["kind"] == "frame_out"]
        performed = [r for r, frame in zip([r for r in records if r["kind"] == "frame_out"], moves, strict=True)
                     if frame["type"] == "perform_action"]
        assert [r["turn"] for r in performed] == turn_ids
        answers = [r for r in records if r["kind"] == "frame_in" and '"perform_action_response"' in r["frame"]]
        assert [r["turn"] for r in answers] == turn_ids  # read by the link's task, joined to the turn all the same

    tables = build_tables([read_transcript(p) for p in paths], {})
    assert len(tables.sessions) == 2
    assert all(s["game"] == "boardgame" and s["tag_condition"] == "llm" and s["llm_calls"] > 0
               for s in tables.sessions)
    assert tables.turns and all(t["llm_calls"] == 1 for t in tables.turns)
    assert tables.llm_calls and all(row["turn"] is not None for row in tables.llm_calls)


async def test_an_llm_call_cut_off_by_the_turns_time_limit_is_recorded_as_cancelled(fake_openai: FakeOpenAI,
                                                                                     tmp_path: Path) -> None:
    fake_openai.responder = lambda request: FakeReply.stall(2.0)
    async with running_engine(games=("tictactoe",), bot="strong", seed=3) as (_engine, url):
        config = BoardgameConfig.model_validate({
            "game": "boardgame", "player": "llm", "prompts_dir": str(PROMPTS_DIR),
            "llm": {"base_url": fake_openai.base_url, "model": "fake-model", "api_key_required": False,
                    "request_timeout": 5, "retry": {"max_attempts": 1}},
            "engine": {"url": url, "agent_id": "A"}, "play": {"decision_seconds": 0.6, "search_seconds": 0.02},
            "transcripts": {"dir": str(tmp_path / "t")}})
        assert await run(config) == 0
    (path,) = find_transcripts(tmp_path / "t")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    calls = [r for r in records if r["kind"] == "llm"]
    ends = [r for r in records if r["kind"] == "turn_end"]
    assert calls and [c["turn"] for c in calls] == [e["turn"] for e in ends]
    # Cut off at the limit, until the endpoint's pace shows it cannot answer in time: then not sent
    # at all (the fallback answers at once), but for one call now and then that measures it again.
    assert [c["outcome"] for c in calls[:2]] == ["cancelled", "cancelled"]
    assert all((c["outcome"] == "cancelled" and c["elapsed_s"] >= 0.15) or c["outcome"] == "skipped" for c in calls)
    assert "skipped" in [c["outcome"] for c in calls]
    assert all(e["outcome"] == "fallback" for e in ends)
