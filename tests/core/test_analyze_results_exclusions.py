"""The analysis plan's exclusion rules leave out exactly the participants they name (a study's store
made with one participant per rule), and the flow and the page say how many and why."""

from __future__ import annotations

import asyncio
import csv
from pathlib import Path

import pytest

pytest.importorskip("scipy")
pytest.importorskip("statsmodels")

from agent.analyze.__main__ import main
from agent.analyze.results.exclusions import excluded, llm_unavailable
from agent.core.studies.analysis_plan import ExclusionSpec
from tests.results_study import example_copy, simulate

RULED = {"screened_out": ["P02"], "stop_after_one": ["P03"], "withdraw": ["P04"], "outage": ["P05"]}


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _study(folder: Path, exclude: str | None = None) -> Path:
    path = example_copy(folder)
    if exclude is not None:
        text = path.read_text()
        head, tail = text.split("  exclude:\n", 1)
        path.write_text(head + f"  exclude: {exclude}\n" + tail[tail.index("store:"):])
    asyncio.run(simulate(path, 8, {"planner": 1.0}, seed=5, **RULED))
    return path


def _run(path: Path, out: Path) -> None:
    assert main([str(path.parent / "pilot-transcripts"), "--study", str(path), "--results", str(out),
                 "--jobs", "1"]) == 0


def test_each_rule_leaves_out_its_participant(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _study(tmp_path)
    _run(path, tmp_path / "out")
    said = capsys.readouterr().out
    assert ("results: 4 participant(s) analysed, 4 excluded (1 withdrawn, 1 screened_out, 1 not_completed, "
            "1 llm_unavailable)") in said
    total = _csv(tmp_path / "out" / "flow.csv")[-1]
    assert {k: total[k] for k in ("invited", "consented", "started", "completed", "excluded_withdrawn",
                                  "excluded_screened_out", "excluded_not_completed", "excluded_llm_unavailable",
                                  "analysed")} == {
        "invited": "8", "consented": "8", "started": "8", "completed": "5", "excluded_withdrawn": "1",
        "excluded_screened_out": "1", "excluded_not_completed": "1", "excluded_llm_unavailable": "1",
        "analysed": "4"}
    desc = _csv(tmp_path / "out" / "descriptives.csv")
    assert {r["n"] for r in desc if r["outcome"] == "teamwork"} == {"4"}  # P01, P06, P07, P08
    page = (tmp_path / "out" / "results.html").read_text(encoding="utf-8")
    assert "4 excluded (1 withdrew, 1 screened out by failed attention checks, 1 did not complete every game, " \
           "1 a game without the model (LLM outage or spend cap) in more than 25% of its AI turns)" in " ".join(
               page.split())


def test_a_rule_turned_off_keeps_its_participants(tmp_path: Path) -> None:
    path = _study(tmp_path, "{not_completed: false, llm_unavailable_share: null}")
    _run(path, tmp_path / "out")
    total = _csv(tmp_path / "out" / "flow.csv")[-1]
    assert (total["excluded_not_completed"], total["excluded_llm_unavailable"], total["analysed"]) == ("0", "0", "6")
    desc = {(r["outcome"], r["condition"]): r["n"] for r in _csv(tmp_path / "out" / "descriptives.csv")}
    # P03 played one game only: in that condition's numbers, not in the others'.
    assert sorted(desc["teamwork", c] for c in ("planner", "quiet", "wizard")) == ["5", "5", "6"]


def test_the_rules_in_order_and_the_share() -> None:
    people = [{"participant": "A", "state": "dropped", "ended_early": "screened_out"},
              {"participant": "B", "state": "dropped", "ended_early": "withdrawn"},
              {"participant": "C", "state": "dropped", "ended_early": None},
              {"participant": "D", "state": "completed", "ended_early": None},
              {"participant": "E", "state": "completed", "ended_early": None}]
    sessions = [{"participant": "D", "game_position": 1, "attempt": 1, "turns": 4, "turns_without_llm": 4},
                {"participant": "D", "game_position": 1, "attempt": 2, "turns": 4, "turns_without_llm": 1},
                {"participant": "E", "game_position": 2, "attempt": 1, "turns": 4, "turns_without_llm": 2}]
    # D's game that counts is its second attempt (1 of 4 without the model); E's has 2 of 4.
    assert llm_unavailable(sessions, 0.25) == {"E"}
    assert llm_unavailable(sessions, 0.5) == set()
    spec = ExclusionSpec(llm_unavailable_share=0.25)
    assert excluded(people, sessions, spec) == {"A": "screened_out", "B": "withdrawn", "C": "not_completed",
                                                "E": "llm_unavailable"}
    assert excluded(people, sessions, ExclusionSpec(screened_out=False, withdrawn=False)) == {
        "A": "not_completed", "B": "not_completed", "C": "not_completed"}


def test_everyone_excluded_gives_a_page_that_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = example_copy(tmp_path)
    asyncio.run(simulate(path, 2, {}, screened_out=["P01", "P02"]))
    _run(path, tmp_path / "out")
    assert "results: 0 participant(s) analysed, 2 excluded (2 screened_out)" in capsys.readouterr().out
    tests = _csv(tmp_path / "out" / "tests.csv")
    assert tests and all(r["note"] and r["p"] == "" for r in tests)
    page = (tmp_path / "out" / "results.html").read_text(encoding="utf-8")
    assert "<strong>0 analysed</strong>" in page and "not computed: " in page
