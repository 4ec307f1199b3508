"""Who consented, whose page closed, who was dropped out, when and why: in ``study status`` (JSON and
text), in the console's study panel, and in the participants table of ``python -m agent.analyze
--study`` (with the online columns; Prolific's ids only when asked for)."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path
from typing import Any

import pytest

from agent.analyze.__main__ import main as analyse
from agent.cli import main
from agent.core.studies.online import OnlineRun, ProlificIds
from agent.core.studies.run import StudyRun
from agent.games import read_study
from agent.games.tangram.console.study_panel import StudyPanel
from tests.core.study_games import play_recorded_game

PROLIFIC_PID = "5f0c" * 6
STUDY = """name: people
design: within
conditions:
  a: {config: offline}
  b: {config: offline}
online:
  recruitment: open
  consent: "We record your moves and chat. Taking part is voluntary."
  completion_code: C0DE42
"""
NOTES = ("online", "source", "consent", "consent_at", "left_at", "finished_page_at", "dropped_at", "dropped_why")


async def _people(path: Path) -> None:
    """L0001 agreed and closed their page; L0002 refused; L0003 agreed and was dropped by the
    experimenter; W00004 came from Prolific, agreed and played a game (its transcript beside the
    database)."""
    async with await StudyRun.open(read_study(path)) as run:
        online = OnlineRun(run)
        one, two, three = await online.invite(3)
        await online.answer_consent(one.code, True)
        await online.left(one.code)
        await online.answer_consent(two.code, False)
        await online.answer_consent(three.code, True)
        await run.drop("L0003")
        code, _ = await online.enter_open(ProlificIds(PROLIFIC_PID, "study-1", "session-1"))
        await online.answer_consent(code, True)
        got = await online.ticket(code)
        assert got is not None
        await play_recorded_game(run, got[1])


@pytest.fixture
def study(tmp_path: Path) -> Path:
    path = tmp_path / "study.yaml"
    path.write_text(STUDY)
    asyncio.run(_people(path))
    return path


def _by_id(people: list[dict[str, Any]], key: str = "id") -> dict[str, dict[str, Any]]:
    return {p[key]: p for p in people}


def test_status_says_who_consented_who_left_and_who_was_dropped_and_why(study: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["study", "status", "--study", str(study), "--json"]) == 0
    people = _by_id(json.loads(capsys.readouterr().out)["participants"])
    assert set(people) == {"L0001", "L0002", "L0003", "W00004"}
    left, refused, dropped, prolific = people["L0001"], people["L0002"], people["L0003"], people["W00004"]
    assert (left["online"], left["source"], left["consent"], left["state"]) == (True, "invite", "given", "active")
    assert left["consent_at"] and left["left_at"] and left["dropped_at"] is None and left["dropped_why"] is None
    assert (refused["consent"], refused["state"], refused["dropped_why"]) == ("refused", "dropped", "refused consent")
    assert refused["dropped_at"] == refused["consent_at"] and refused["left_at"] is None
    assert (dropped["consent"], dropped["state"]) == ("given", "dropped")
    assert dropped["dropped_at"] >= dropped["consent_at"] and "experimenter" in dropped["dropped_why"]
    assert (prolific["source"], prolific["consent"], prolific["left_at"]) == ("open", "given", None)
    assert PROLIFIC_PID not in json.dumps(people)  # the status is pseudonymous

    assert main(["study", "status", "--study", str(study)]) == 0
    lines = {line.split(" ", 1)[0]: line for line in capsys.readouterr().out.splitlines() if line[:1] in "LW"}
    stamp = left["consent_at"][:19].replace("T", " ") + "Z"
    assert f"; consent given {stamp}" in lines["L0001"]
    assert f"; page closed {left['left_at'][:19].replace('T', ' ')}Z, not back" in lines["L0001"]
    assert "; consent refused " in lines["L0002"] and lines["L0002"].endswith(": refused consent")
    assert "; dropped " in lines["L0003"] and lines["L0003"].endswith(
        ": by the experimenter (study drop, or the console's Drop out)")
    assert lines["W00004"].endswith(f"; consent given {prolific['consent_at'][:19].replace('T', ' ')}Z")


def test_a_participant_dropped_because_their_page_closed_says_so(tmp_path: Path) -> None:
    async def scenario() -> dict[str, Any]:
        path = tmp_path / "study.yaml"
        path.write_text(STUDY)
        async with await StudyRun.open(read_study(path)) as run:
            online = OnlineRun(run)
            (one,) = await online.invite(1)
            await online.answer_consent(one.code, True)
            await online.left(one.code)
            await run.store.set_state("L0001", "dropped")  # as the grace ran out (on_leave: drop)
            return (await run.status()).participants[0].model_dump()

    p = asyncio.run(scenario())
    assert p["state"] == "dropped" and p["left_at"] and p["dropped_at"] >= p["left_at"]
    assert p["dropped_why"] in (f"their page closed at {p['left_at']} and they did not come back",
                                "left and did not come back")


def test_the_consoles_study_panel_shows_consent_leaving_and_drops(study: Path) -> None:
    async def snapshot() -> dict[str, Any]:
        async with await StudyRun.open(read_study(study)) as run:
            data = await StudyPanel(run, lambda message: None, online=True).snapshot()
        assert data is not None
        return data

    people = _by_id(asyncio.run(snapshot())["participants"])
    assert people["L0001"]["consent"] == "given" and people["L0001"]["left_at"]
    assert (people["L0002"]["dropped_why"], people["L0003"]["state"]) == ("refused consent", "dropped")
    assert all(name in people["W00004"] for name in NOTES)
    # The page draws them: one column per participant row, as study status words it.
    static = Path(__file__).resolve().parents[2] / "agent" / "games" / "tangram" / "console" / "static"
    script = (static / "console.js").read_text()
    assert "participantNotes(p)" in script
    assert all(f"p.{name}" in script for name in ("consent", "consent_at", "left_at", "dropped_at", "dropped_why"))
    assert "Consent · left · dropped" in (static / "index.html").read_text()


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open() as f:
        return list(csv.DictReader(f))


def test_the_participants_table_carries_the_online_columns_and_platform_ids_only_when_asked(
        study: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert analyse(["--study", str(study), "--out", str(out), "--jobs", "1"]) == 0
    people = _by_id(_csv(out / "participants.csv"), "participant")
    columns = set(next(iter(people.values())))
    assert set(NOTES) <= columns and not columns & {"prolific_pid", "prolific_study", "prolific_session"}
    assert (people["L0001"]["consent"], people["L0001"]["source"], people["L0001"]["online"]) == (
        "given", "invite", "True")
    assert people["L0001"]["left_at"] and people["L0001"]["consent_at"]
    assert (people["L0002"]["consent"], people["L0002"]["dropped_why"]) == ("refused", "refused consent")
    assert people["W00004"]["source"] == "open" and people["W00004"]["finished_page_at"] == ""
    # Pseudonymous by default: Prolific's ids are in no file written.
    for written in out.rglob("*"):
        if written.is_file():
            assert PROLIFIC_PID.encode() not in written.read_bytes(), written

    with_ids = tmp_path / "with-ids"
    assert analyse(["--study", str(study), "--out", str(with_ids), "--jobs", "1", "--with-platform-ids"]) == 0
    # With the flag the ids go to a key file kept apart; the tables stay pseudonymous.
    keys = _by_id(_csv(with_ids / "key.csv"), "participant")
    assert (keys["W00004"]["prolific_pid"], keys["W00004"]["prolific_study"],
            keys["W00004"]["prolific_session"]) == (PROLIFIC_PID, "study-1", "session-1")
    assert keys.get("L0001", {}).get("prolific_pid", "") == ""
    assert not set(next(iter(_csv(with_ids / "participants.csv")))) & {"prolific_pid"}


def test_platform_ids_need_a_study(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "a.jsonl").write_text('{"kind": "session_start", "session": "x"}\n')
    assert analyse([str(tmp_path / "t"), "--out", str(tmp_path / "o"), "--with-platform-ids"]) == 2
    assert "--with-platform-ids goes with --study" in capsys.readouterr().err
