"""A study's transcripts go beside its database (core/studies/files.py), and the database names them
relative to its own folder: a study folder moved elsewhere keeps its transcripts, and
``python -m agent.analyze --study`` finds them there. Paths written by earlier versions (absolute)
still work."""

from __future__ import annotations

import asyncio
import csv
import shutil
from pathlib import Path

import pytest

from agent.analyze.__main__ import main
from agent.core.studies.files import resolve_transcript, stored_transcript, transcripts_dir
from agent.core.studies.run import StudyRun
from agent.games import read_study
from tests.core.study_games import play_recorded_game

STUDY = """name: moving
design: within
conditions:
  explain: {config: offline}
  silent: {config: offline}
"""


def test_a_path_inside_the_databases_folder_is_kept_relative_and_one_outside_absolute(tmp_path: Path) -> None:
    db = tmp_path / "lab" / "study.db"
    assert transcripts_dir(db) == tmp_path / "lab" / "study-transcripts"
    inside = tmp_path / "lab" / "study-transcripts" / "a.jsonl"
    assert stored_transcript(db, inside) == "study-transcripts/a.jsonl"
    outside = tmp_path / "elsewhere" / "b.jsonl"
    assert stored_transcript(db, outside) == str(outside)
    assert stored_transcript(db, None) is None
    # Read back against wherever the database is now; an absolute path stays as it is.
    moved = tmp_path / "moved" / "study.db"
    expected = tmp_path / "moved" / "study-transcripts" / "a.jsonl"
    assert resolve_transcript(moved, "study-transcripts/a.jsonl") == expected
    assert resolve_transcript(moved, str(outside)) == outside
    assert resolve_transcript(moved, None) is None and resolve_transcript(moved, "") is None


def _two_participants(folder: Path) -> Path:
    """The study file in ``folder``; P01 plays both conditions, P02 one, each game's transcript
    written where the study puts it."""
    folder.mkdir(parents=True)
    path = folder / "study.yaml"
    path.write_text(STUDY)
    asyncio.run(_play(path, folder))
    return path


async def _play(path: Path, folder: Path) -> None:
    async with await StudyRun.open(read_study(path)) as run:
        assert run.transcripts_dir == folder / "study-transcripts"
        for pid, games in (("P01", 2), ("P02", 1)):
            await run.next_participant(pid)
            for _ in range(games):
                assignment = await run.current()
                assert assignment is not None
                await play_recorded_game(run, assignment)
        stored = [g.transcript for g in await run.store.games()]
    assert all(s is not None and s.startswith("study-transcripts/") for s in stored), stored


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open() as f:
        return list(csv.DictReader(f))


def test_a_moved_study_folder_keeps_its_transcripts_for_the_analysis(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    _two_participants(tmp_path / "lab")
    shutil.move(tmp_path / "lab", tmp_path / "archive" / "lab-2026")
    assert not (tmp_path / "lab").exists()
    moved = tmp_path / "archive" / "lab-2026"
    out = tmp_path / "out"
    # No transcript folder named: the transcripts the study's database names, found where the study is now.
    assert main(["--study", str(moved / "study.yaml"), "--out", str(out), "--jobs", "1"]) == 0
    printed = capsys.readouterr()
    assert "3 of them among these transcripts" in printed.out and "warning" not in printed.err
    sessions = _csv(out / "sessions.csv")
    assert sorted((s["participant"], s["condition"]) for s in sessions) == [
        ("P01", "explain"), ("P01", "silent"), ("P02", "silent")]
    games = _csv(out / "study_games.csv")
    assert all(Path(g["transcript"]).parent == moved / "study-transcripts" for g in games)
    assert all(Path(g["transcript"]).is_file() for g in games)


def test_a_transcript_the_database_names_that_is_gone_is_said_not_fatal(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    study = _two_participants(tmp_path / "lab")
    first = sorted((tmp_path / "lab" / "study-transcripts").glob("*.jsonl"))[0]
    first.unlink()
    out = tmp_path / "out"
    assert main(["--study", str(study), "--out", str(out), "--jobs", "1"]) == 0
    err = capsys.readouterr().err
    assert "warning: 1 transcript(s) the study's database names are not there" in err
    assert len(_csv(out / "sessions.csv")) == 2
    assert "named by the study&#39;s database, not found" in (out / "summary.html").read_text()


def test_without_a_folder_or_a_study_the_analysis_says_what_it_needs(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--out", str(tmp_path / "o")]) == 2
    assert "name a folder of transcripts, or a study" in capsys.readouterr().err


async def test_a_database_with_absolute_paths_still_gives_its_transcripts(tmp_path: Path) -> None:
    """Databases written before transcripts went beside them hold absolute paths: kept as they are."""
    path = tmp_path / "study.yaml"
    path.write_text(STUDY)
    old = tmp_path / "old-transcripts" / "x.jsonl"
    async with await StudyRun.open(read_study(path)) as run:
        await run.next_participant("P01")
        assignment = await run.current()
        assert assignment is not None
        slot = run.study.plan.slots(0)[0]
        await run.store.start_game("P01", slot, "s1", str(old))  # as the earlier agent wrote it
        (game,) = await run.store.games()
        assert game.transcript == str(old) and run.transcript_of(game) == old
