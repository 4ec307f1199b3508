"""Piloting a study in the simulator (sim/pilot.py, ``python -m agent.games.tangram.sim --study``):
a within-subject study of three conditions and six scripted participants runs end to end, every
participant plays each condition once, the orders form a balanced Latin square, and every
transcript carries its participant, condition and order."""

from __future__ import annotations

import csv
import json
import shutil
import sqlite3
from collections import Counter
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent.analyze.__main__ import main as analyse
from agent.games.tangram.sim.__main__ import main

CONDITIONS = ["planner", "quiet", "wizard"]


def write_study(tmp_path: Path) -> Path:
    (tmp_path / "base.yaml").write_text(yaml.safe_dump({
        "player": "planner", "transcripts": {"dir": str(tmp_path / "transcripts")}}))
    study = tmp_path / "study.yaml"
    study.write_text(yaml.safe_dump({
        "name": "pilot-test", "design": "within",
        "conditions": {"planner": {"config": "base.yaml"},
                       "quiet": {"config": "base.yaml", "overrides": {"turn": {"thinking_line": False}}},
                       "wizard": {"config": "base.yaml", "console": "wizard"}}}, sort_keys=False))
    return study


def rows(db: Path, table: str) -> list[dict[str, Any]]:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute(f"SELECT * FROM {table} ORDER BY rowid")]
    finally:
        conn.close()


@pytest.mark.timeout(240)
def test_three_conditions_and_six_participants_pilot_into_a_balanced_latin_square(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    study = write_study(tmp_path)
    db = tmp_path / "pilot.db"
    code = main(["--study", str(study), "--participants", "6", "--turns", "2", "--store", str(db), "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "Wizard-of-Oz" in out and "balanced: 1 completed participant(s) on each of the 6 sequences" in out
    assert not (tmp_path / "study.db").exists()  # the study's own database is never touched by a pilot

    people = rows(db, "participants")
    assert [p["id"] for p in people] == [f"P0{i}" for i in range(1, 7)]
    assert all(p["state"] == "completed" for p in people)
    games = rows(db, "games")
    assert len(games) == 18 and all(g["completed"] == 1 and g["attempt"] == 1 for g in games)
    orders = []
    for p in people:
        played = sorted((g for g in games if g["participant"] == p["id"]), key=lambda g: g["position"])
        order = [g["condition"] for g in played]
        assert sorted(order) == CONDITIONS  # each condition once
        assert order == json.loads(p["conditions"])
        assert [g["order_position"] for g in played] == [1, 2, 3]
        orders.append(order)
    # A balanced Latin square of an odd number of conditions: 2n distinct sequences, each condition
    # in each place equally often, and each condition followed by each other one equally often.
    assert len({tuple(o) for o in orders}) == 6
    for place in range(3):
        assert Counter(o[place] for o in orders) == dict.fromkeys(CONDITIONS, 2)
    follows = Counter(pair for o in orders for pair in pairwise(o))
    assert len(follows) == 6 and set(follows.values()) == {2}

    # Every transcript is beside the pilot's database (named relative to its folder, whatever the
    # conditions' transcripts.dir) and carries its participant, condition and order.
    assert not (tmp_path / "transcripts").exists()
    for g in games:
        assert g["transcript"].startswith("pilot-transcripts/")
        path = tmp_path / g["transcript"]
        assert path.parent == tmp_path / "pilot-transcripts" and path.is_file()
        records = [json.loads(line) for line in path.read_text().splitlines()]
        start = records[0]
        assert start["kind"] == "session_start" and start["study"] == "pilot-test"
        assert start["tags"] == {"participant": g["participant"], "condition": g["condition"],
                                 "order": str(g["order_position"])}
        assert start["session"] == g["session_id"]
        end = [r for r in records if r["kind"] == "study_game_end"]
        assert len(end) == 1 and end[0]["completed"] is True
        assert f"participant={g['participant']}" in path.name and f"condition={g['condition']}" in path.name
    # The printed participants table names every game.
    table = [line for line in out.splitlines() if line.startswith("P0")]
    assert sum(" yes " in line for line in table) == 18


@pytest.mark.timeout(240)
def test_a_study_played_then_moved_elsewhere_is_analysed_from_its_database(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Real games through the in-lab study server (the pilot serves the study as python -m agent --study
    does), into the study's own database; then the whole study folder is moved, and the analysis
    finds every game's transcript from the database alone."""
    lab = tmp_path / "lab"
    lab.mkdir()
    study = write_study(lab)
    assert main(["--study", str(study), "--participants", "2", "--turns", "2", "--store", str(lab / "study.db"),
                 "--no-progress"]) == 0
    assert not (lab / "transcripts").exists()  # the conditions' transcripts.dir is not the study's folder
    assert len(list((lab / "study-transcripts").glob("*.jsonl"))) == 6
    moved = tmp_path / "archive" / "lab"
    shutil.move(lab, moved)
    capsys.readouterr()
    out = tmp_path / "analysis"
    assert analyse(["--study", str(moved / "study.yaml"), "--out", str(out), "--jobs", "1"]) == 0
    printed = capsys.readouterr()
    assert "2 participants, 6 games started, 6 of them among these transcripts" in printed.out, printed
    with (out / "study_games.csv").open() as f:
        games = list(csv.DictReader(f))
    assert len(games) == 6 and all(Path(g["transcript"]).parent == moved / "study-transcripts" for g in games)
    assert len(list((out / "replays").glob("*.html"))) == 6


def test_a_pilot_whose_games_cannot_complete_is_refused_before_it_starts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    study = write_study(tmp_path)
    assert main(["--study", str(study), "--participants", "2", "--turns", "1", "--store", str(tmp_path / "p.db")]) == 2
    err = capsys.readouterr().err
    assert "--turns 1" in err and "completed_after_turns" in err and err.count("\n") == 1
    assert not (tmp_path / "p.db").exists()


def test_a_pilot_never_reuses_a_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    study = write_study(tmp_path)
    (tmp_path / "p.db").write_text("")
    assert main(["--study", str(study), "--store", str(tmp_path / "p.db")]) == 2
    assert "exists" in capsys.readouterr().err


@pytest.mark.timeout(300)
def test_a_pilot_of_twelve_answers_the_questionnaires_and_its_effect_shows_in_the_exports(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.questionnaire_study import QUESTIONNAIRES

    (tmp_path / "base.yaml").write_text(yaml.safe_dump({
        "player": "planner", "transcripts": {"dir": str(tmp_path / "transcripts")}}))
    study = tmp_path / "study.yaml"
    study.write_text(yaml.safe_dump({
        "name": "pilot-asked", "design": "within", "store": "pilot.db",
        "conditions": {"planner": {"config": "base.yaml"},
                       "quiet": {"config": "base.yaml", "overrides": {"turn": {"thinking_line": False}}}}},
        sort_keys=False) + QUESTIONNAIRES)
    db = tmp_path / "pilot.db"
    assert main(["--study", str(study), "--participants", "12", "--turns", "2", "--store", str(db),
                 "--no-progress", "--effect", "planner=+1.5"]) == 0, capsys.readouterr().out
    capsys.readouterr()
    assert len(rows(db, "pages")) == 12 * 4 and all(p["submitted_at"] for p in rows(db, "pages"))
    assert {a["language"] for a in rows(db, "answers")} == {"en", "pt"}
    out = tmp_path / "out"
    assert analyse(["--study", str(study), "--out", str(out), "--jobs", "1"]) == 0
    with (out / "answers.csv").open() as f:
        answers = list(csv.DictReader(f))
    assert len({a["participant"] for a in answers}) == 12 and len(answers) == 12 * (3 + 4 + 4 + 2)
    with (out / "scores.csv").open() as f:
        scores = list(csv.DictReader(f))
    assert len(scores) == 24
    mean = {c: sum(float(r["score_help"]) for r in scores if r["condition"] == c) / 12 for c in ("planner", "quiet")}
    # Likert 1-5 around 3; the effect put in (1.5 points) shows, within the noise of 12 participants.
    assert 0.9 < mean["planner"] - mean["quiet"] < 2.1, mean
    assert abs(mean["quiet"] - 3) < 0.6, mean
