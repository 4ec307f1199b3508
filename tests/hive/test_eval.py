"""The evaluation command: matches over TCP between any two players, with its summary."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from agent.games.hive import eval as hive_eval


def test_bot_against_bot_prints_the_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert hive_eval.main(["--a", "ours", "--b", "random", "-n", "2", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "matches: 2 (2 played)" in out and "win rate" in out
    assert "A forfeits: 0; decision ms p50" in out and "B forfeits: 0" in out


def test_an_external_agent_command_plays(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Our own CLI as the external agent, against the example bot."""
    config = tmp_path / "c.yaml"
    config.write_text(f"game: hive\ntranscripts:\n  dir: {tmp_path}\n")
    command = f"cmd:{sys.executable} -m agent --config {config} --connect {{host}}:{{port}} --team ext"
    assert hive_eval.main(["--a", command, "--b", "example", "-n", "1", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "(1 played)" in out and "A wins 1" in out
    assert len(list(tmp_path.glob("*.jsonl"))) == 1


@pytest.mark.parametrize("args", [["--a", "nobody"], ["--b", "cmd:agent-without-port"]])
def test_unknown_players_are_refused(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        hive_eval.main(args)
    assert exc.value.code == 2
    if args[1] == "nobody":
        # the message names every player once
        listed = capsys.readouterr().err.split("use ", 1)[1].split(" or cmd:")[0].split(", ")
        assert listed[:2] == ["ours", "ours+chaos"] and "siege-ring-234" in listed
        assert len(listed) == len(set(listed))


def test_percentiles() -> None:
    assert hive_eval.percentile([3.0, 1.0, 2.0], 0.5) == 2.0
    assert hive_eval.percentile([], 0.5) != hive_eval.percentile([], 0.5)  # nan


@pytest.mark.timeout(30)
async def test_an_external_agent_that_never_connects_is_killed_and_reaped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A match that times out takes its external agent with it, waited for before the loop goes on.

    Before, the cancelled wait left the process running (and, on 3.13, its transport warned
    "Event loop is closed" once asyncio.run had closed the loop)."""
    monkeypatch.setattr(hive_eval, "MATCH_TIMEOUT_S", 1.0)
    pid_file = tmp_path / "pid"
    sleeper = (f"cmd:{sys.executable} -c \"import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); "
               f"time.sleep(60)\" {pid_file} {{port}}")
    async with asyncio.timeout(10):
        record = await hive_eval.play_one(sleeper, "example", seed=1)
    assert "did not end within 1 s" in record.error
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # gone and reaped: a zombie would still answer


@pytest.mark.timeout(30)
async def test_run_to_end_kills_and_reaps_when_cancelled(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    task = asyncio.create_task(hive_eval.run_to_end(
        [sys.executable, "-c", "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); "
         "time.sleep(60)", str(pid_file)], 60))
    async with asyncio.timeout(10):
        while not pid_file.exists() or not pid_file.read_text():
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)
    assert await hive_eval.run_to_end([sys.executable, "-c", "raise SystemExit(3)"], 10) == 3


def test_the_summary_counts_matches_played_out_apart_from_forfeits() -> None:
    def record(seed: int, winner: str, forfeit: str | None) -> dict[str, object]:
        return {"seed": seed, "seat_a": 0, "scores": (3, 1), "winner": winner, "turns": 100,
                "forfeit": forfeit, "error": "timeout" if forfeit else "",
                "decision_ms": {"a": [1.0, 2.0], "b": []}, "answer_ms": {"a": [], "b": []}, "coach": {}}

    records = [record(0, "a", None), record(1, "a", "b"), record(2, "a", "b"), record(3, "b", None),
               record(4, "draw", None)]
    out = hive_eval.summarise("ours", "them", records, 1.0)
    assert "A wins 3, draws 1, losses 1" in out
    assert "played out (no forfeit) 3: A wins 1, draws 1, losses 1: win rate 33.3 % (95 % interval 6.1-79.2 %)" in out
    assert "A forfeits: 0" in out and "B forfeits: 2" in out
