"""``python -m agent study ...``: participants from the command line, also while another process
holds the study open, and ``status --json`` in the shape scripts read."""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent.cli import main, read_study
from agent.core.studies.online import OnlineRun
from agent.core.studies.run import StudyRun
from agent.study_cli import _parser

ROOT = Path(__file__).resolve().parents[2]
STUDY = """name: cli-pilot
design: within
conditions:
  explain: {config: offline.yaml}
  silent: {config: offline.yaml, overrides: {turn: {thinking_line: false}}}
"""


@pytest.fixture
def study(tmp_path: Path) -> Path:
    (tmp_path / "offline.yaml").write_text("player: planner\n")
    path = tmp_path / "study.yaml"
    path.write_text(STUDY)
    return path


def _study(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agent", "study", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


async def test_next_from_another_process_binds_the_serving_agents_next_game(study: Path) -> None:
    async with await StudyRun.open(read_study(study)) as serving:
        assert await serving.current() is None
        done = _study("next", "P07", "--study", str(study))
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == ("P07 active: sequence 1 (explain, silent), 0 of 2 games completed; "
                                       "next game: explain (1 of 2)")
        assignment = await serving.current()
        assert assignment is not None and (assignment.participant, assignment.condition) == ("P07", "explain")
        started = await serving.game_started(assignment, "s1", None)  # the agent writes while the CLI reads
        await serving.game_ended(started, completed=True)
        status = json.loads(_study("status", "--study", str(study), "--json").stdout)
        assert status["participants"][0]["completed"] == 1


def test_status_json_lists_each_participants_id_order_and_completed(study: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    for pid in ("P01", "P02", "P03"):
        assert main(["study", "next", pid, "--study", str(study)]) == 0
        if pid != "P03":
            assert main(["study", "pause", pid, "--study", str(study)]) == 0
    assert main(["study", "drop", "P02", "--study", str(study)]) == 0
    capsys.readouterr()
    assert main(["study", "status", "--study", str(study), "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert [(p["id"], p["order"], p["completed"], p["state"]) for p in status["participants"]] == [
        ("P01", ["explain", "silent"], 0, "paused"), ("P02", ["silent", "explain"], 0, "dropped"),
        ("P03", ["explain", "silent"], 0, "active")]  # started before P02 dropped: the sequences were level
    assert status["counts"] == {"active": 1, "paused": 1, "dropped": 1, "completed": 0}
    assert [(s["order"], s["participants"], s["dropped"]) for s in status["sequences"]] == [
        (["explain", "silent"], 2, 0), (["silent", "explain"], 0, 1)]
    assert {c["condition"]: c["participants"] for c in status["by_condition"]} == {"explain": 2, "silent": 2}
    assert status["study"] == "cli-pilot" and len(status["plan_sha256"]) == 16


def test_status_text_shows_the_balance(study: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["study", "next", "P01", "--study", str(study)]) == 0
    assert main(["study", "status", "--study", str(study)]) == 0
    out = capsys.readouterr().out
    assert "participants: 1 (1 active, 0 paused, 0 completed, 0 dropped out)" in out
    assert "no participant completed yet (2 sequences)" in out
    assert "P01 active: sequence 1 (explain, silent)" in out


@pytest.mark.parametrize("args, line", [
    (["pause", "P09"], "error: no participant P09 in this study"),
    (["resume", "P01"], "error: participant P01 is already active"),
    (["next", "P02"], "error: participant P01 is still active: pause, drop or finish them first"),
])
def test_refused_changes_are_one_line_and_status_2(study: Path, capsys: pytest.CaptureFixture[str],
                                                   args: list[str], line: str) -> None:
    assert main(["study", "next", "P01", "--study", str(study)]) == 0
    capsys.readouterr()
    assert main(["study", *args, "--study", str(study)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(line) and err.count("\n") == 1, err


def test_a_bad_study_file_stops_the_command_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("name: s\ndesign: within\nconditions: {a: {config: missing.yaml}}\n")
    assert main(["study", "status", "--study", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: study {path}: condition 'a': cannot read config") and err.count("\n") == 1
    assert not (tmp_path / "s.db").exists()  # nothing was created for a study that does not load


def test_invite_writes_links_readable_by_the_owner_only_and_keeps_only_hashes(
        study: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["study", "invite", "--study", str(study), "--n", "3", "--url", "https://study.example.org/"]) == 0
    printed = capsys.readouterr().out.splitlines()
    written = study.parent / "study-invites-1-3.csv"
    assert printed[-1].startswith("3 links written to ") and str(written) in printed[-1]
    rows = written.read_text().splitlines()
    assert rows[0] == "invite,participant,link,code" and len(rows) == 4
    number, participant, link, code = rows[1].split(",")
    assert (number, participant) == ("1", "L0001") and link == f"https://study.example.org/p/{code}"
    assert printed[0] == f"L0001  {link}"
    assert written.stat().st_mode & 0o077 == 0
    # The next batch goes on numbering; the first file is never overwritten.
    assert main(["study", "invite", "--study", str(study), "--n", "2", "--url", "https://study.example.org"]) == 0
    assert (study.parent / "study-invites-4-5.csv").exists()
    assert main(["study", "invite", "--study", str(study), "--n", "1", "--url", "https://x.org",
                 "--out", str(written)]) == 2
    assert "exists already" in capsys.readouterr().err
    assert asyncio.run(_first_visit(study, code)) == "L0001"


async def _first_visit(study: Path, code: str) -> str | None:
    async with await StudyRun.open(read_study(study)) as run:
        visit = await OnlineRun(run).start(code)
        return None if visit is None else visit.participant


def test_invite_needs_an_address(study: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["study", "invite", "--study", str(study), "--n", "2"]) == 2
    assert "--url https://HOST or online.base_url" in capsys.readouterr().err
    assert main(["study", "invite", "--study", str(study), "--n", "2", "--url", "https://x.org/?a=b"]) == 2
    assert main(["study", "invite", "--study", str(study), "--n", "0", "--url", "https://x.org"]) == 2


def test_every_subcommand_takes_the_study_file_as_study_and_only_so(study: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    subcommands = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert set(subcommands) == {"next", "pause", "resume", "drop", "status", "invite", "withdraw", "link"}
    args = {"next": ["P01"], "pause": ["P01"], "resume": ["P01"], "drop": ["P01"], "status": [], "invite": ["--n", "2"],
            "withdraw": ["P01"], "link": ["P01"]}
    for name, command in subcommands.items():
        option = next(a for a in command._actions if "--study" in a.option_strings)
        assert option.required and option.metavar == "FILE", name
        assert _parser().parse_args([name, *args[name], "--study", str(study)]).study == study
        with pytest.raises(SystemExit):  # without it: the usage and "required: --study"
            _parser().parse_args([name, *args[name]])
        assert "--study" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # the study file is never positional
        _parser().parse_args(["invite", str(study), "--n", "2"])


def test_withdraw_deletes_the_participants_games_and_frees_their_sequence(study: Path,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["study", "next", "P01", "--study", str(study)]) == 0

    async def played() -> Path:
        async with await StudyRun.open(read_study(study)) as run:
            assignment = await run.current()
            assert assignment is not None
            transcript = run.transcripts_dir / "t.jsonl"
            transcript.parent.mkdir(parents=True, exist_ok=True)
            transcript.write_text('{"said": "my own words"}\n')
            started = await run.game_started(assignment, "s1", transcript)
            await run.game_ended(started, completed=True)
            return transcript

    transcript = asyncio.run(played())
    capsys.readouterr()
    assert main(["study", "withdraw", "P01", "--study", str(study)]) == 0
    assert "P01 withdrew" in capsys.readouterr().out and not transcript.exists()

    async def after() -> tuple[list, list, list]:
        async with await StudyRun.open(read_study(study)) as run:
            return await run.store.games(), await run.store.withdrawals(), await run.store.participants()
    games, withdrawals, rows = asyncio.run(after())
    assert games == [] and [w["participant"] for w in withdrawals] == ["P01"]
    assert (rows[0].state, rows[0].outcome) == ("dropped", "withdrawn")
    assert main(["study", "withdraw", "P01", "--study", str(study)]) == 2
    assert "withdrawn already" in capsys.readouterr().err
    assert main(["study", "next", "P02", "--study", str(study)]) == 0
    rows = asyncio.run(after())[2]
    assert rows[1].sequence == rows[0].sequence  # the withdrawn participant's sequence went to the next


def test_with_questionnaires_next_prints_the_participants_lab_link_and_link_makes_a_new_one(
        study: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agent.core.studies.online import digest
    from tests.questionnaire_study import QUESTIONNAIRES

    study.write_text(STUDY + QUESTIONNAIRES)
    assert main(["study", "next", "P01", "--study", str(study)]) == 0
    out = capsys.readouterr().out
    assert "P01's pages (open on this machine's browser" in out
    first = out.split("http://127.0.0.1:8090/p/", 1)[1].split()[0]
    assert main(["study", "link", "P01", "--study", str(study), "--pages-port", "9001"]) == 0
    second = capsys.readouterr().out.split("http://127.0.0.1:9001/p/", 1)[1].split()[0]
    assert first != second

    async def linked() -> tuple[bool, bool]:
        async with await StudyRun.open(read_study(study)) as run:
            return (await run.store.by_link(digest(first)) is not None,
                    await run.store.by_link(digest(second)) is not None)
    assert asyncio.run(linked()) == (False, True)  # the new link replaced the old one
    assert main(["study", "status", "--study", str(study)]) == 0
    assert "at: questionnaire about (before the first game)" in capsys.readouterr().out
    assert main(["study", "link", "P09", "--study", str(study)]) == 2
    assert "no participant P09" in capsys.readouterr().err


def test_without_questionnaires_next_prints_no_link(study: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["study", "next", "P01", "--study", str(study)]) == 0
    assert "http://" not in capsys.readouterr().out
