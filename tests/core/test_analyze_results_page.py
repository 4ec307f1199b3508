"""python -m agent.analyze --study FILE --results OUT: the example study's analysis plan run on a
simulated pilot of 24 (an effect on one condition): the page and its CSV files, the flow, the
effect found, the same bytes twice; exclusions leave out exactly the participants they name."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path

import pytest

pytest.importorskip("scipy")
pytest.importorskip("statsmodels")

from agent.analyze.__main__ import main
from tests.results_study import example_copy, simulate

FILES = ("results.html", "flow.csv", "descriptives.csv", "tests.csv", "reliability.csv", "item_total.csv",
         "analysed.csv", "datapackage.json")


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def pilot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("pilot24")
    path = example_copy(folder)
    asyncio.run(simulate(path, 24, {"planner": 1.5}, seed=3))
    return path


def _results(path: Path, out: Path) -> int:
    return main([str(path.parent / "pilot-transcripts"), "--study", str(path), "--results", str(out), "--jobs", "1"])


def test_the_page_and_its_numbers(pilot: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = pilot.parent / "results"
    assert _results(pilot, out) == 0
    assert "results: 24 participant(s) analysed, 0 excluded" in capsys.readouterr().out
    for name in FILES:
        assert (out / name).is_file(), name
    flow = _csv(out / "flow.csv")
    assert [r["sequence"] for r in flow] == ["1", "2", "3", "4", "5", "6", "all"]
    total = flow[-1]
    assert (total["invited"], total["consented"], total["started"], total["completed"], total["analysed"]) == (
        "24", "24", "24", "24", "24")
    assert all(r["analysed"] == "4" for r in flow[:-1])  # 24 participants over the 6 sequences
    tests = _csv(out / "tests.csv")
    primary = {r["comparison"]: r for r in tests if r["outcome"] == "teamwork" and r["test"] == "wilcoxon"}
    assert set(primary) == {"planner vs quiet", "planner vs wizard", "quiet vs wizard"}
    for comparison in ("planner vs quiet", "planner vs wizard"):  # the effect put on planner's answers
        assert float(primary[comparison]["p_corrected"]) < 0.05 and primary[comparison]["significant"] == "True"
        assert float(primary[comparison]["estimate"]) > 0
    assert float(primary["quiet vs wizard"]["p_corrected"]) >= float(primary["quiet vs wizard"]["p"])
    assert {r["test"] for r in tests if r["outcome"] == "teamwork"} == {"wilcoxon", "friedman", "mixed_model"}
    assert {r["outcome"] for r in tests} == {"teamwork", "reliance", "effort", "pieces_placed", "duration_s"}
    desc = {(r["outcome"], r["condition"]): r for r in _csv(out / "descriptives.csv")}
    assert desc["teamwork", "planner"]["n"] == "24"
    assert float(desc["teamwork", "planner"]["mean"]) > float(desc["teamwork", "quiet"]["mean"]) + 0.8
    reliability = {r["scale"]: r for r in _csv(out / "reliability.csv")}
    assert set(reliability) == {"teamwork", "reliance", "effort"}
    assert reliability["effort"]["note"]  # one item: alpha said in words, not a number
    assert {r["item"] for r in _csv(out / "item_total.csv") if r["scale"] == "reliance"} == {"good_spots", "undo_urge"}
    page = (out / "results.html").read_text(encoding="utf-8")
    assert page.count("<svg") == 5 and "src=\"http" not in page and "<link" not in page
    assert "<th>excluded screened out</th>" in page and "<strong>24 analysed</strong>" in page
    package = json.loads((out / "datapackage.json").read_text())
    assert package["analysis_sha256"] in page and package["plan_sha256"] in page and package["agent_version"] in page
    for resource in package["resources"]:
        header = next(csv.reader((out / resource["path"]).open(encoding="utf-8")))
        assert [f["name"] for f in resource["schema"]["fields"]] == header
        assert all(f["description"] for f in resource["schema"]["fields"])
    frictionless = pytest.importorskip("frictionless")
    report = frictionless.validate(out / "datapackage.json")
    assert report.valid, report.flatten(["rowNumber", "fieldName", "type", "note"])
    again = pilot.parent / "again"
    assert _results(pilot, again) == 0
    for name in FILES:
        assert (out / name).read_bytes() == (again / name).read_bytes(), name


def test_without_an_analysis_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = example_copy(tmp_path)
    text = path.read_text()
    path.write_text(text[:text.index("\nanalysis:")] + "\nstore: pilot.db\n")
    asyncio.run(simulate(path, 1, {}))
    assert _results(path, tmp_path / "out") == 2
    assert "declares no analysis plan" in capsys.readouterr().err


def test_a_plan_changed_after_the_sessions_is_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = example_copy(tmp_path)
    asyncio.run(simulate(path, 6, {"planner": 1.0}))
    before = json.loads((_package_of(path, tmp_path / "first")).read_text())["analysis_sha256"]
    path.write_text(path.read_text().replace("  alpha: 0.05\n", "  alpha: 0.01\n"))
    assert _results(path, tmp_path / "second") == 0
    assert f"sessions recorded another analysis plan ({before})" in capsys.readouterr().err
    page = (tmp_path / "second" / "results.html").read_text(encoding="utf-8")
    assert "name another analysis plan" in page and before in page


def _package_of(path: Path, out: Path) -> Path:
    assert _results(path, out) == 0
    return out / "datapackage.json"
