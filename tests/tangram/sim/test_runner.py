"""The runner end to end: CLI against a scripted agent, our own agent in-process, and the report."""

from __future__ import annotations

import asyncio
import io
import json
import struct
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from agent.core.transcript import Transcript
from agent.games.tangram.config import Config
from agent.games.tangram.contract import Decision, Player, TurnView
from agent.games.tangram.sim.__main__ import main
from agent.games.tangram.sim.progress import Progress
from agent.games.tangram.sim.runner import RunOptions, agent_notes, percentile, run_in_process, summarize
from agent.games.tangram.sim.scripted_agent import free_spot, serve_scripted_agent


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.images: list[str] = []
        self.games: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "img" and a.get("src"):
            self.images.append(a["src"] or "")
        if tag == "h2" and a.get("id"):
            self.games.append(a["id"] or "")

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


async def test_cli_against_a_running_agent_prints_json_and_writes_a_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "rep"
    async with serve_scripted_agent("good") as url:
        # main() runs its own event loop, so it goes to a thread while the agent serves here.
        code = await asyncio.to_thread(main, ["--connect", url, "--games", "2", "--turns", "3", "--seed", "1",
                                              "--human", "chatty", "--tween", "0", "--parallel", "2",
                                              "--json", "--no-progress", "--report", str(report)])
    assert code == 0
    out = capsys.readouterr().out.strip().splitlines()
    summary = json.loads(out[-1])
    assert summary["agent"] == url and summary["games"] == 2 and summary["turns"] == 6
    assert summary["turns_ended"] == 6 and summary["turns_undone"] == 0
    assert summary["plays_per_turn"] == 1.0 and summary["protocol_violations"] == 0
    assert summary["llm_calls_per_turn"] is None  # no transcripts from a remote agent
    assert summary["turn_latency_p50_s"] is not None and summary["chat_requests"] >= 1
    assert any(line.startswith("turns ") for line in out[:-1])

    page = _Page()
    page.feed((report / "index.html").read_text(encoding="utf-8"))
    assert page.games == ["game-1", "game-2"]
    assert len(page.images) == 2 * 3 * 2  # board after every human and every AI turn
    for src in page.images:
        assert _png_size(report / src) == (562, 540)
    text = " ".join(page.text)
    assert "I'll place" in text and "finish" in text
    game1 = json.loads((report / "game-1.json").read_text())
    assert len(game1["turns"]) == 3 and game1["turns"][0]["frames"][0]["type"] == "chat"
    assert json.loads((report / "summary.json").read_text())["turns"] == 6


def test_cli_rejects_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--human", "sleepy"])
    assert main(["--config", "/nonexistent.yaml"]) == 2


def test_cli_reports_an_unreachable_agent(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--connect", "ws://127.0.0.1:1", "--games", "1", "--turns", "2", "--json", "--no-progress"])
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 1 and summary["game_errors"] and summary["turns"] == 0


class _GridPlayer(Player):
    """A stand-in for our players: places the next drawer piece on a grid, and logs an LLM call."""

    name = "grid"

    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript

    async def play(self, view: TurnView) -> Decision:
        self.transcript.record("llm", purpose="play", prompt_tokens=1000, completion_tokens=50, image_bytes=4000)
        pose = free_spot(view.board())
        return Decision(pose, f"Placing {pose.piece if pose else 'nothing'}.", reasoning="grid order", source="test")

    async def adjust(self, view: TurnView) -> Decision:
        return Decision(None, "I'll leave it.", source="test")

    async def chat(self, view: TurnView) -> str:
        return "Sure!"


async def test_in_process_run_reads_the_agents_transcripts(tmp_path: Path) -> None:
    config = Config(transcripts={"dir": tmp_path / "ignored"})
    options = RunOptions(games=2, turns=2, human="random", seed=3, tween=0.0, parallel=2, deadline=20)
    results = await run_in_process(config, options, tmp_path / "tr", player_factory=lambda t: _GridPlayer(t))
    assert all(r.agent_records for r in results)
    ports = {r.local_port for r in results}
    assert all(f":{r.local_port}" in r.agent_records[0].get("peer", "") for r in results if r.agent_records)
    assert len(ports) == 2
    summary = summarize(results, options, "in-process", transcripts=True)
    assert summary["turns"] == 4 and summary["turns_ended"] == 4
    assert summary["llm_calls_per_turn"] == 1.0
    assert summary["tokens_per_turn"] == 1050.0 and summary["image_bytes_per_llm_call"] == 4000.0
    notes = agent_notes(results[0])
    assert notes and all(n["reasoning"] == "grid order" for ns in notes.values() for n in ns)


def test_percentile() -> None:
    assert percentile([], 50) is None
    assert percentile([3.0], 95) == 3.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([float(i) for i in range(101)], 95) == 95.0


def test_summary_without_transcripts_has_null_llm_numbers() -> None:
    s: dict[str, Any] = summarize([], RunOptions(), "x", transcripts=False)
    assert s["llm_calls_per_turn"] is None and s["turns"] == 0 and s["plays_per_turn"] is None


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


def test_progress_bar_draws_only_on_a_terminal() -> None:
    tty = _Stream(True)
    bar = Progress(4, stream=tty)
    bar.advance(1, "game 1: finish")
    bar.close()
    assert "1/4 turns" in tty.getvalue() and tty.getvalue().startswith("\r")
    for stream, enabled in ((_Stream(False), None), (_Stream(True), False)):
        quiet = Progress(4, stream=stream, enabled=enabled)
        quiet.advance(2)
        quiet.close()
        assert stream.getvalue() == ""


def test_an_llm_config_without_its_key_fails_before_any_game(tmp_path, monkeypatch, capsys):
    from agent.games.tangram.config import PROJECT_DIR
    from agent.games.tangram.sim.__main__ import main

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)  # no .env here
    code = main(["--config", str(PROJECT_DIR / "configs" / "gpt4o.yaml"), "--games", "1", "--turns", "1",
                 "--no-progress"])
    assert code == 1
    assert "needs an API key: set OPENAI_API_KEY" in capsys.readouterr().err


async def test_a_figure_score_error_is_the_games_error_not_a_missing_score(monkeypatch) -> None:
    from agent.games.tangram.sim import runner

    def broken(board: Any, objective: str) -> float:
        raise RuntimeError("silhouette broke")

    monkeypatch.setattr(runner, "figure_score", broken)
    options = RunOptions(games=1, turns=2, human="random", seed=3, tween=0.0, deadline=20)
    async with serve_scripted_agent("good") as url:
        [result] = await runner.run_games(url, options)
    assert result.figure_score is None and result.error == "figure score: RuntimeError: silhouette broke"
    summary = summarize([result], options, url, transcripts=False)
    assert summary["turns_ended"] == 2 and summary["game_errors"] == [result.error]  # the turns are kept
