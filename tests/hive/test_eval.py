"""The evaluation command: matches over TCP between any two players, with its summary."""

from __future__ import annotations

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
def test_unknown_players_are_refused(args: list[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        hive_eval.main(args)
    assert exc.value.code == 2


def test_percentiles() -> None:
    assert hive_eval.percentile([3.0, 1.0, 2.0], 0.5) == 2.0
    assert hive_eval.percentile([], 0.5) != hive_eval.percentile([], 0.5)  # nan
