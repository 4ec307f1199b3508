"""python -m agent.analyze: transcripts of any game to tables and an HTML summary grouped by tag."""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from agent.analyze.__main__ import main
from agent.analyze.summary import group_tags
from agent.analyze.tables import TranscriptFile, read_transcript, session_rows
from agent.core.studies.pricing import Price, load_prices, price_for
from agent.core.transcript import Transcript as Writer
from agent.core.transcript import record_scope

PRICES = {"gpt-4o": Price(2.5, 10.0), "gpt-4o-mini": Price(0.15, 0.6)}


async def _session(folder: Path, participant: str, condition: str, turns: int, chats: int) -> Path:
    """A transcript as a game writes it, through the core's writer."""
    tags = {"participant": participant, "condition": condition}
    t = Writer(folder, tags=tags)
    await t.open()
    t.record("session_start", game="tangram", player_kind="llm", model="gpt-4o", agent_version="0.1.0",
             config_sha256="c" * 16, templates_sha256="t" * 16, tags=tags)
    for n in range(1, turns + 1):
        with record_scope(turn=n):
            t.record("turn_start", objective="A house")
            t.text_once("system_prompt", "You are a partner.")
            t.record("llm", purpose="play", outcome="ok", model="gpt-4o-2024-08-06", prompt_tokens=1000,
                     completion_tokens=100, latency_s=0.5, elapsed_s=0.5)
            t.record("turn_end", outcome="played", seconds=1.0 + n, pieces_on_board=n + 1)
    for n in range(1, chats + 1):
        t.record("frame_in", type="chatRequest", message=f"question {n}", request=n)
        with record_scope(request=n):
            t.record("chat_reply", reply=f"answer {n}", outcome="answered", seconds=0.2)
    t.record("session_end", reason="disconnected")
    await t.close()
    assert t.path is not None
    return t.path


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open() as f:
        return list(csv.DictReader(f))


async def test_three_tagged_sessions_give_tables_and_a_summary_grouped_by_condition(tmp_path: Path) -> None:
    src = tmp_path / "transcripts"
    await _session(src, "P01", "explain", 3, 2)
    await _session(src / "day2", "P02", "explain", 2, 1)  # found in subfolders too
    await _session(src, "P03", "silent", 4, 0)
    (src / "notes.jsonl").write_text("not json\n")
    out = tmp_path / "out"
    assert main([str(src), "--out", str(out)]) == 0

    sessions = {r["tag_participant"]: r for r in _csv(out / "sessions.csv")}
    assert set(sessions) == {"P01", "P02", "P03"}
    p1 = sessions["P01"]
    assert (p1["tag_condition"], p1["turns"], p1["chats"], p1["llm_calls"]) == ("explain", "3", "2", "3")
    assert float(p1["est_cost_usd"]) == pytest.approx(3 * (1000 * 2.5 + 100 * 10.0) / 1e6)
    assert float(p1["final_pieces_on_board"]) == 4 and p1["config_sha256"] == "c" * 16
    turns = _csv(out / "turns.csv")
    assert len(turns) == 9 and {r["outcome"] for r in turns} == {"played"}
    assert [float(r["pieces_on_board"]) for r in turns if r["tag_participant"] == "P03"] == [2, 3, 4, 5]
    chats = _csv(out / "chats.csv")
    assert [(r["message"], r["reply"]) for r in chats if r["tag_participant"] == "P01"] == [
        ("question 1", "answer 1"), ("question 2", "answer 2")]
    assert len(_csv(out / "llm_calls.csv")) == 9
    assert (out / "sessions.parquet").is_file()  # pyarrow is in the dev extra

    html = (out / "summary.html").read_text()
    assert "By condition" in html and "By participant" not in html  # one value per session is no grouping
    assert html.count("data:image/png;base64,") == 4  # turn time, tokens and cost, chats, pieces over turns
    assert "notes.jsonl: 1 damaged line(s) skipped" in html or "notes.jsonl: no records" in html
    for needle in ("explain", "silent", "Turn time", "Chats per session", "Pieces placed over turns"):
        assert needle in html


async def test_by_names_the_grouping_and_text_is_escaped(tmp_path: Path) -> None:
    src = tmp_path / "t"
    await _session(src, "<script>alert(1)</script>", "explain", 1, 0)
    await _session(src, "P02", "silent", 1, 0)
    out = tmp_path / "out"
    assert main([str(src), "--out", str(out), "--by", "participant"]) == 0
    html = (out / "summary.html").read_text()
    assert "By participant" in html and "<script>alert" not in html and "&lt;script&gt;" in html


def test_damaged_lines_are_counted_and_the_rest_is_read(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    lines = [json.dumps({"kind": "session_start", "session": "s1", "tags": {"a": "1"}}), "{broken", "[1]",
             json.dumps({"kind": "turn_end", "turn": 1, "outcome": "played", "seconds": 2, "score": float("nan")}),
             json.dumps({"kind": "llm", "prompt_tokens": 10, "completion_tokens": 5, "model": "unknown-model"})]
    path.write_text("\n".join(lines) + "\n")
    transcript = read_transcript(path)
    assert transcript.bad_lines == 2 and len(transcript.records) == 3
    rows = session_rows(transcript, PRICES)
    assert rows.sessions[0]["turns"] == 1 and rows.sessions[0]["bad_lines"] == 2
    assert math.isnan(rows.llm_calls[0]["est_cost_usd"])  # no price for that model: unknown, not zero
    assert "score" not in rows.turns[0]  # NaN is no measure


def test_empty_transcript_is_reported_not_fatal(tmp_path: Path) -> None:
    rows = session_rows(TranscriptFile(tmp_path / "e.jsonl", []), PRICES)
    assert rows.sessions == [] and rows.skipped == ["e.jsonl: no records"]


def test_prices_longest_prefix_and_files(tmp_path: Path) -> None:
    assert price_for("gpt-4o-mini-2024-07-18", PRICES) == PRICES["gpt-4o-mini"]
    assert price_for("gpt-4o-2024-08-06", PRICES) == PRICES["gpt-4o"]
    assert price_for("gpt-4", PRICES) is None and price_for(None, PRICES) is None
    assert "gpt-4o" in load_prices(None)
    bad = tmp_path / "p.yaml"
    bad.write_text("m: {input: x}\n")
    with pytest.raises(ValueError, match="model 'm' needs numbers"):
        load_prices(bad)


def test_group_tags_default_and_requested() -> None:
    import pandas as pd

    df = pd.DataFrame({"session": ["a", "b", "c"], "tag_participant": ["1", "2", "3"],
                       "tag_condition": ["x", "x", "y"], "tag_study": ["s", "s", "s"]})
    assert group_tags(df, []) == ["tag_condition"]
    assert group_tags(df, ["participant"]) == ["tag_participant"]
    assert group_tags(df[["session", "tag_participant"]], []) == ["tag_participant"]


@pytest.mark.parametrize(("args", "message"), [
    (["missing-dir"], "is not a folder"),
    (["EMPTY"], "no *.jsonl transcripts"),
])
def test_bad_arguments_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
                                    message: str) -> None:
    argv: list[Any] = [str(tmp_path / a) if a != "EMPTY" else str(tmp_path) for a in args]
    assert main([*argv, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


async def test_guard_overrides_are_counted_per_turn_and_per_session(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "transcripts"
    t = Writer(src)
    await t.open()
    t.record("session_start", game="forge", player_kind="llm", model="gpt-4o")
    for n, overrides in ((1, 0), (2, 1), (3, 2)):
        with record_scope(turn=n):
            t.record("turn_start")
            for _ in range(overrides):
                t.record("guard", rule="lethal-attack", model_choice="did not attack",
                         replacement="attacked with Grizzly Bears", reason="lethal")
            t.record("turn_end", outcome="guard" if overrides else "llm", seconds=0.1)
    t.record("session_end", reason="reflect")
    await t.close()
    await _session(src, "P01", "explain", 2, 0)  # a session with no guard at all
    out = tmp_path / "out"
    assert main([str(src), "--out", str(out)]) == 0
    assert "2 sessions, 5 turns, 0 chat replies, 2 LLM calls, 3 guard overrides" in capsys.readouterr().out
    sessions = sorted(_csv(out / "sessions.csv"), key=lambda r: r["game"])
    assert [(r["game"], r["guard_overrides"]) for r in sessions] == [("forge", "3"), ("tangram", "0")]
    turns = [r for r in _csv(out / "turns.csv") if r["outcome"] in ("guard", "llm")]
    assert [float(r["guard_overrides"] or 0) for r in sorted(turns, key=lambda r: r["turn"])] == [0, 1, 2]


def test_candidate_and_own_plays_are_counted_per_session(tmp_path: Path) -> None:
    pose = {"piece": "Red", "x": 1.0, "y": 2.0, "rotation": 0.0}
    decisions = [{"turn": 1, "source": "llm", "candidate": "A", "pose": pose},
                 {"turn": 2, "source": "llm", "candidate": None, "pose": pose},
                 {"turn": 2, "source": "llm+feedback", "candidate": None, "pose": pose, "adjust": True},
                 {"turn": 3, "source": "llm", "candidate": "B", "pose": pose},
                 {"turn": 4, "source": "llm", "candidate": None, "pose": None},  # a pass is no play
                 {"turn": 5, "source": "fallback", "candidate": None, "pose": pose}]  # nor the fallback's
    lines = [{"kind": "session_start", "session": "s"}]
    for d in decisions:
        lines += [{"kind": "turn_start", "turn": d["turn"]}, {"kind": "decision", **d},
                  {"kind": "turn_end", "turn": d["turn"], "outcome": "played", "seconds": 1}]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    rows = session_rows(read_transcript(path), PRICES)
    assert (rows.sessions[0]["candidate_plays"], rows.sessions[0]["own_plays"]) == (2, 2)
    assert {r["turn"]: r.get("play") for r in rows.turns} == {1: "candidate A", 2: "own", 3: "candidate B",
                                                              4: None, 5: "fallback"}
    older = tmp_path / "o.jsonl"  # decisions without the field: neither count, no column of zeros
    older.write_text(json.dumps({"kind": "decision", "turn": 1, "source": "llm", "pose": pose}) + "\n")
    assert session_rows(read_transcript(older), PRICES).sessions[0]["candidate_plays"] is None


def test_the_summary_shows_candidate_and_own_plays(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pose = {"piece": "Red", "x": 1.0, "y": 2.0, "rotation": 0.0}
    src = tmp_path / "t"
    src.mkdir()
    lines = [{"kind": "session_start", "session": "s", "game": "tangram", "tags": {"condition": "marks"}}]
    for turn, letter in ((1, "A"), (2, None), (3, "A")):
        lines += [{"kind": "turn_start", "turn": turn},
                  {"kind": "decision", "turn": turn, "source": "llm", "candidate": letter, "pose": pose},
                  {"kind": "turn_end", "turn": turn, "outcome": "played", "seconds": 1}]
    (src / "s.jsonl").write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    out = tmp_path / "out"
    assert main([str(src), "--out", str(out)]) == 0
    assert "2 candidate and 1 own plays" in capsys.readouterr().out
    html = (out / "summary.html").read_text()
    assert "candidate plays" in html and "own plays" in html
    assert [(r["candidate_plays"], r["own_plays"]) for r in _csv(out / "sessions.csv")] == [("2", "1")]


async def test_connections_that_never_reached_a_turn_are_not_counted_as_sessions(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A link preview, a page closed, a reconnect that ended before any playRequest: their transcripts
    hold no turn. They are no session of the summary (counted on their own line), and sessions.csv
    keeps their rows with turns 0."""
    src = tmp_path / "t"
    await _session(src, "P01", "explain", 2, 1)
    await _session(src, "P02", "explain", 3, 0)
    await _session(src, "P03", "silent", 1, 0)
    idle = [await _session(src, "P01", "explain", 0, 0), await _session(src, "P03", "silent", 0, 1)]
    out = tmp_path / "out"
    assert main([str(src), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("3 sessions, 6 turns, 2 chat replies,")
    assert "2 connection(s) without a turn (not counted as sessions)" in printed
    assert len(_csv(out / "sessions.csv")) == 5  # every transcript's row, the idle ones with turns 0
    html = (out / "summary.html").read_text()
    assert "<title>Study summary: 3 sessions</title>" in html and "<p>3 session(s) from" in html
    assert "Connections without a turn: 2" in html
    for path in idle:
        session = json.loads(path.read_text().splitlines()[0])["session"]
        assert session in html.split("Connections without a turn", 1)[1].split("</p>", 1)[0]
    # The group table counts the sessions that played: explain 2, silent 1.
    assert re.search(r"<td>explain</td>\s*<td>2</td>", html) and re.search(r"<td>silent</td>\s*<td>1</td>", html)
