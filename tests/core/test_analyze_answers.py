"""python -m agent.analyze --study with questionnaires: answers long and wide, the codebook, the data
package (validated with Frictionless), the key file apart, free text shown as text."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path

import pytest

from agent.analyze.__main__ import main
from agent.core.studies.run import StudyRun
from agent.core.transcript import Transcript
from agent.games import read_study
from tests.questionnaire_study import QUESTIONNAIRES

STUDY = """name: asked
design: within
conditions:
  explain: {config: offline}
  silent: {config: offline}
""" + QUESTIONNAIRES
MARKUP = "<script>alert('x')</script><b>bold</b>"


async def _transcript(folder: Path, session: str, meta: dict, pieces: int) -> None:
    t = Transcript(folder, session_id=session, tags=meta["tags"])
    await t.open()
    t.record("session_start", **meta)
    t.record("turn_start", turn=1)
    t.record("turn_end", turn=1, outcome="played", seconds=1.0, pieces_on_board=pieces)
    t.record("session_end", reason="finished")
    await t.close()


async def _run(tmp_path: Path) -> Path:
    """P01 (explain > silent) and P02 (silent > explain) play and answer every page; P01 writes
    markup in a free text and prefers their second partner."""
    path = tmp_path / "study.yaml"
    path.write_text(STUDY)
    study = read_study(path)
    async with await StudyRun.open(study) as run:
        for pid in ("P01", "P02"):
            await run.next_participant(pid)
            row = await run.store.participant(pid)
            assert row is not None
            for step in run.steps_of(row):
                if step.kind == "game":
                    a = await run.current()
                    assert a is not None and a.condition == step.condition
                    started = await run.game_started(a, f"{pid}-{step.position}", None)
                    meta = a.session_metadata({"game": "tangram", "player_kind": "planner", "tags": {}})
                    await _transcript(tmp_path / "transcripts", f"{pid}-{step.position}", meta,
                                      pieces=3 if a.condition == "explain" else 5)
                    await run.game_ended(started, completed=True)
                elif step.questionnaire == "about":
                    await run.answer_page(pid, step, "pt" if pid == "P02" else "en",
                                          {"age": 30, "games": "other", "hello": MARKUP if pid == "P01" else ""},
                                          {"games": "chess"})
                elif step.questionnaire == "partner":
                    high = step.condition == "explain"
                    await run.answer_page(pid, step, "en", {"helped": 5 if high else 2, "hindered": 1 if high else 4,
                                                            "effort": 80 if high else 40, "check": "blue"})
                else:
                    await run.answer_page(pid, step, "en", {"preferred": "2", "why": MARKUP})
    return path


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_answers_long_wide_codebook_and_a_valid_package(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    study = asyncio.run(_run(tmp_path))
    out = tmp_path / "out"
    assert main([str(tmp_path / "transcripts"), "--out", str(out), "--study", str(study), "--jobs", "1"]) == 0
    long = _csv(out / "answers.csv")
    assert len(long) == 2 * (3 + 4 + 4 + 2)
    helped = {(r["participant"], r["condition"], r["order"]): (r["value"], r["scored"], r["seconds_on_page"] != "")
              for r in long if r["item"] == "helped"}
    assert helped == {("P01", "explain", "1"): ("5", "5.0", True), ("P01", "silent", "2"): ("2", "2.0", True),
                      ("P02", "silent", "1"): ("2", "2.0", True), ("P02", "explain", "2"): ("5", "5.0", True)}
    hindered = [r for r in long if r["item"] == "hindered" and r["condition"] == "explain"]
    assert {(r["value"], r["scored"]) for r in hindered} == {("1", "5.0")}  # reverse-keyed: flipped
    about = [r for r in long if r["item"] == "games"]
    assert {(r["participant"], r["value"], r["other"], r["language"], r["condition"]) for r in about} == {
        ("P01", "other", "chess", "en", ""), ("P02", "other", "chess", "pt", "")}
    # Place 2 of P01's order is silent, of P02's explain: the partner's place maps to the condition.
    preferred = {r["participant"]: (r["value"], r["partner_condition"]) for r in long if r["item"] == "preferred"}
    assert preferred == {"P01": ("2", "silent"), "P02": ("2", "explain")}

    wide = {(r["participant"], r["condition"]): r for r in _csv(out / "scores.csv")}
    assert set(wide) == {("P01", "explain"), ("P01", "silent"), ("P02", "explain"), ("P02", "silent")}
    assert float(wide["P01", "explain"]["score_help"]) == 5.0  # (5 + flipped 1) / 2
    assert float(wide["P01", "silent"]["score_help"]) == 2.0   # (2 + flipped 4) / 2
    assert float(wide["P02", "explain"]["score_effort"]) == 80.0
    assert float(wide["P01", "explain"]["pieces_placed"]) == 3 and float(wide["P02", "silent"]["pieces_placed"]) == 5
    assert {float(r["ai_turns"]) for r in wide.values()} == {1.0}
    assert {"chats", "duration_s", "llm_cost_usd", "order"} <= set(next(iter(wide.values())))

    items = {(r["questionnaire"], r["item"]): r for r in _csv(out / "items.csv")}
    assert items["partner", "hindered"]["reverse"] == "True" and items["partner", "hindered"]["scale"] == "help"
    assert items["partner", "helped"]["text_pt"] == "O meu parceiro ajudou-me."
    assert items["partner", "helped"]["labels_en"] == "1: Not at all | 5: Very much"
    assert (items["about", "age"]["min"], items["about", "age"]["max"]) == ("18.0", "99.0")
    assert items["partner", "check"]["attention_check"] == "True" and items["partner", "check"]["correct"] == "blue"

    package = json.loads((out / "datapackage.json").read_text())
    assert package["plan_sha256"] and set(package["config_sha256"]) == {"explain", "silent"}
    for resource in package["resources"]:
        header = next(csv.reader((out / resource["path"]).open(encoding="utf-8")))
        assert [f["name"] for f in resource["schema"]["fields"]] == header
        assert all(f["description"] for f in resource["schema"]["fields"])
    frictionless = pytest.importorskip("frictionless")
    report = frictionless.validate(out / "datapackage.json")
    assert report.valid, report.flatten(["rowNumber", "fieldName", "type", "note"])

    html = (out / "summary.html").read_text()
    assert "<script>alert" not in html and "&lt;script&gt;alert" in html
    assert "scale scores by condition" in html


def test_platform_ids_go_to_a_key_file_only(tmp_path: Path) -> None:
    study = asyncio.run(_run(tmp_path))

    async def give_ids() -> None:
        async with await StudyRun.open(read_study(study)) as run:
            async with run.store._write() as conn:
                await conn.execute("UPDATE participants SET prolific_pid = 'PROLIFIC5f3e' WHERE id = 'P01'")

    asyncio.run(give_ids())
    out = tmp_path / "out"
    assert main([str(tmp_path / "transcripts"), "--out", str(out), "--study", str(study), "--jobs", "1",
                 "--with-platform-ids"]) == 0
    assert _csv(out / "key.csv")[0] == {"participant": "P01", "prolific_pid": "PROLIFIC5f3e", "prolific_study": "",
                                        "prolific_session": ""}
    leaked = [p.name for p in out.rglob("*") if p.is_file() and p.name != "key.csv"
              and b"PROLIFIC5f3e" in p.read_bytes()]
    assert leaked == []
    assert "key.csv" not in (out / "datapackage.json").read_text()
    assert (out / "key.csv").stat().st_mode & 0o077 == 0
