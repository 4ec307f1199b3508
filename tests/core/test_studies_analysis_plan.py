"""The study file's analysis plan: checked with the rest (every problem at once, a guess for a
misspelt name), its hash in every session's record beside the plan's."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.core.resources import PROJECT_DIR
from agent.core.studies.analysis_plan import AnalysisSpec, analysis_hash
from agent.core.studies.study_file import StudyError, read_study_file
from agent.games import read_study
from tests.questionnaire_study import QUESTIONNAIRES

STUDY = """name: planned
design: DESIGN
conditions:
  explain: {config: offline}
  silent: {config: offline}
""" + QUESTIONNAIRES


def _write(tmp_path: Path, analysis: str, design: str = "within") -> Path:
    path = tmp_path / "study.yaml"
    text = STUDY.replace("DESIGN", design)
    if design != "within":  # one partner each
        text = text.replace(" or {partner2}", "").replace(" ou {partner2}", "")
    path.write_text(text + analysis)
    return path


def test_a_plan_with_defaults_and_its_hash(tmp_path: Path) -> None:
    spec = read_study_file(_write(tmp_path, "analysis: {primary: help, secondary: [effort, pieces_placed]}\n"))
    plan = spec.analysis
    assert plan is not None
    assert plan.outcomes == ["help", "effort", "pieces_placed"]
    assert (plan.comparison, plan.test, plan.correction, plan.alpha, plan.control) == (
        "all_pairs", "default", "holm", 0.05, None)
    assert plan.exclude.screened_out and plan.exclude.not_completed and plan.exclude.llm_unavailable_share is None
    same = AnalysisSpec.model_validate({"primary": ["help"], "secondary": ["effort", "pieces_placed"],
                                        "correction": "holm"})
    assert analysis_hash(plan) == analysis_hash(same) and len(analysis_hash(plan) or "") == 16
    other = same.model_copy(update={"alpha": 0.01})
    assert analysis_hash(other) != analysis_hash(plan)
    assert analysis_hash(None) is None


def test_every_problem_at_once_with_guesses(tmp_path: Path) -> None:
    path = _write(tmp_path, """analysis:
  primary: [halp, pieces_placed]
  secondary: [pieces_placd, pieces_placed]
  comparison: {control: silnt}
  test: mann_whitney
  alpha: 0.5
""")
    with pytest.raises(StudyError) as info:
        read_study_file(path)
    # pydantic's own check (alpha) comes first, alone; fixed, the cross-checks come all at once.
    assert "analysis.alpha" in str(info.value)
    path.write_text(path.read_text().replace("alpha: 0.5", "alpha: 0.05"))
    with pytest.raises(StudyError) as info:
        read_study_file(path)
    text = str(info.value)
    assert "has 5 problems" in text
    assert "field 'analysis.primary': unknown outcome 'halp' (did you mean 'help'?)" in text
    assert "field 'analysis.secondary': unknown outcome 'pieces_placd' (did you mean 'pieces_placed'?)" in text
    assert "field 'analysis.secondary': pieces_placed is primary already" in text
    assert "field 'analysis.comparison.control': unknown condition 'silnt' (did you mean 'silent'?)" in text
    assert "field 'analysis.test': mann_whitney is not a test of a within design" in text


def test_a_scale_only_before_the_games_is_no_outcome(tmp_path: Path) -> None:
    # 'age' is an item, not a scale; the before_first page's items have no condition to compare.
    path = _write(tmp_path, "analysis: {primary: age}\n")
    with pytest.raises(StudyError, match="unknown outcome 'age'"):
        read_study_file(path)


def test_between_tests_and_a_fixed_design(tmp_path: Path) -> None:
    spec = read_study_file(_write(tmp_path, "analysis: {primary: help, test: welch, omnibus: kruskal}\n", "between"))
    assert spec.analysis is not None and spec.analysis.test == "welch"
    with pytest.raises(StudyError, match="a comparison needs two conditions or more"):
        read_study_file(_write(tmp_path, "analysis: {primary: help}\n", "fixed"))


def test_the_analysis_hash_is_in_every_session_record(tmp_path: Path) -> None:
    import asyncio

    from agent.core.studies.run import StudyRun

    path = _write(tmp_path, "analysis: {primary: help}\n")
    study = read_study(path)
    assert study.analysis_hash is not None

    async def meta() -> dict:
        async with await StudyRun.open(study) as run:
            await run.next_participant("P01")
            a = await run.current()
            assert a is not None
            return a.session_metadata({"game": "tangram", "tags": {}})

    recorded = asyncio.run(meta())
    assert recorded["analysis_sha256"] == study.analysis_hash and recorded["plan_sha256"] == study.plan.hash


def test_the_shipped_examples_stay_valid() -> None:
    example = read_study(PROJECT_DIR / "configs" / "study-example.yaml")
    assert example.analysis is not None and example.analysis.primary == ["teamwork"]
    assert example.analysis.exclude.llm_unavailable_share == 0.25
    read_study(PROJECT_DIR / "configs" / "study-online-example.yaml")
