"""The example study's simulated pilot through ``python -m agent.analyze --study S --results OUT``, and
every number of its results page computed again by R from the data the page analysed.

The pilot: 28 participants through the example study's store (tests/results_study.py), an effect of
+1.5 scale points on the planner condition's answers; four of them each meet one exclusion rule
(screened out, stopped after one game, withdrew, an LLM outage in a game), so 24 are analysed. The
command writes ``analysed.csv`` (each outcome per analysed participant and condition, after the
exclusions); the test adds each scale's scored item answers (from the study's answers table, not from
the page's code) and the plan, and one Rscript run (tests/core/r/analyze_results.R) computes from them,
with R's own functions: per condition n, mean, SD, median and quartiles (``quantile`` type 7); each
Wilcoxon signed-rank test (``wilcox.test``, exact or corrected as the statistics module chooses), its
rank-biserial r, each family's ``p.adjust`` with the plan's correction; the Friedman test with Kendall's
W; the mixed model (lme4 ``lmer``, the order position a fixed effect, REML) with Wald z, p and
interval; each scale's Cronbach's alpha with Feldt's interval and the item-total correlations
(``psych::alpha``). Every one of those numbers in descriptives.csv, tests.csv, reliability.csv and
item_total.csv must equal R's.

Tolerances are test_analyze_statistics.py's, for the reasons it states: 1e-6 relative for the same
method (descriptives, Wilcoxon, Friedman, corrections, alpha; 1e-12 absolute where the number is 0),
1e-4 relative for the mixed model (two REML optimisers; its p-value by that times z²). One addition: a
mixed-model estimate or interval end near 0 is compared to 1e-4 of its standard error (of 1 for z)
rather than of itself, since the two fits' standard errors differ by up to that share and an interval
end is the estimate +- 1.96 SE (the page's 0.0121636 against lme4's 0.0121655 for an end whose SE is
0.093: 1e-5 of the SE, 1.6e-4 of the end). Not compared: the bootstrap intervals of the rank-biserial r
and of Kendall's W (R would resample differently: no R number is the same computation), checked here
only for holding the estimate; and lmerTest's Satterthwaite degrees of freedom (the page gives the Wald
z, whose df is empty).

What this comparison found: on the pilot's effort scale (no participant variance), statsmodels' gradient
optimisers stopped short of the REML optimum while reporting convergence (-2 REML log-likelihood
562.168, lme4's 562.155; standard errors 3e-4 relative off lme4's, outside the tolerance). The model
(agent/analyze/results/mixed.py) is now fitted by those and by Powell's search and keeps the better
optimum, which is lme4's.
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import json
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("scipy")
pytest.importorskip("statsmodels")

from agent.analyze.__main__ import main
from agent.analyze.study_join import read_study_rows
from agent.games import read_study
from tests.core.test_analyze_statistics import MIXED, SAME
from tests.results_study import example_copy, simulate

R_SCRIPT = Path(__file__).with_name("r") / "analyze_results.R"
RSCRIPT = shutil.which("Rscript")
ZERO = 1e-12  # absolute: a number that is 0 on one side is 0 to rounding on the other
PARTICIPANTS = 28
EFFECT = {"planner": 1.5}
RULED = {"screened_out": ["P05"], "stop_after_one": ["P11"], "withdraw": ["P17"], "outage": ["P23"]}
WALL_CLOCK = {"duration_s"}
"""Measured with the clock while the pilot writes its transcripts: a few milliseconds, often 0, so on a
fast machine a test can have nothing to test (the page and R then both say so instead of a number); the
other outcomes come from the pilot's seeded draws and are the same on every machine."""
RULE_OF = {"P05": "screened_out", "P11": "not_completed", "P17": "withdrawn", "P23": "llm_unavailable"}


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _number(text: str) -> float | None:
    return None if text == "" else float(text)


def _write_csv(path: Path, header: list[str], rows: list[list[Any]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


class Pilot:
    def __init__(self, study: Path, out: Path, r: dict[str, Any], said: str) -> None:
        self.study, self.out, self.r, self.said = study, out, r, said
        self.rows = read_study_rows(study)
        self.analysis = read_study(study).analysis

    def table(self, name: str) -> list[dict[str, str]]:
        return _csv(self.out / f"{name}.csv")


@pytest.fixture(scope="module")
def pilot(tmp_path_factory: pytest.TempPathFactory) -> Pilot:
    """The pilot, its results page, and R's numbers from the data the page analysed (one Rscript run)."""
    if RSCRIPT is None:
        pytest.skip("Rscript not found: install r-base-core r-cran-lme4 r-cran-psych r-cran-jsonlite")
    folder = tmp_path_factory.mktemp("pilot_against_r")
    study = example_copy(folder)
    asyncio.run(simulate(study, PARTICIPANTS, EFFECT, seed=3, **RULED))
    out = folder / "results"
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        code = main([str(folder / "pilot-transcripts"), "--study", str(study), "--results", str(out), "--jobs", "1"])
    assert code == 0
    r_in = folder / "r_in"
    r_in.mkdir()
    shutil.copy(out / "analysed.csv", r_in / "analysed.csv")
    rows = read_study_rows(study)
    plan = read_study(study).analysis
    assert plan is not None and rows.design == "within"
    conditions = list(rows.conditions)
    kept = {r["participant"] for r in _csv(out / "analysed.csv")}
    scales = _export_items(rows.answers, kept, r_in)
    pairs = ([[a, b] for i, a in enumerate(conditions) for b in conditions[i + 1:]] if plan.control is None
             else [[c, plan.control] for c in conditions if c != plan.control])
    (r_in / "plan.json").write_text(json.dumps({
        "conditions": conditions, "primary": plan.primary, "secondary": plan.secondary, "pairs": pairs,
        "control": plan.control or conditions[0], "alpha": plan.alpha, "correction": plan.correction,
        "scales": scales}), encoding="utf-8")
    r_out = folder / "r.json"
    run = subprocess.run([RSCRIPT, "--vanilla", str(R_SCRIPT), str(r_in), str(r_out)], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, f"Rscript failed:\n{run.stderr}"
    return Pilot(study, out, json.loads(r_out.read_text(encoding="utf-8")), said.getvalue())


def _export_items(answers: list[dict[str, Any]], kept: set[str], folder: Path) -> list[str]:
    """Each after-game scale's scored answers of the analysed participants, one CSV per scale: participant,
    condition, one column per item (read from the study's answers table, not with the page's code)."""
    cells: dict[str, dict[tuple[str, str], dict[str, float]]] = {}
    items: dict[str, list[str]] = {}
    for a in answers:
        if not a.get("scale") or a.get("when") != "after_each" or str(a["participant"]) not in kept:
            continue
        scale = str(a["scale"])
        items.setdefault(scale, [])
        if a["item"] not in items[scale]:
            items[scale].append(str(a["item"]))
        cells.setdefault(scale, {}).setdefault((str(a["participant"]), str(a["condition"])), {})[str(a["item"])] = \
            float(a["scored"])
    for scale, by_row in cells.items():
        _write_csv(folder / f"items_{scale}.csv", ["participant", "condition", *items[scale]],
                   [[p, c, *(row.get(i, "") for i in items[scale])] for (p, c), row in sorted(by_row.items())])
    return sorted(cells)


def close(python: float | None, r: float | None, rel: float = SAME) -> bool:
    if python is None or r is None:
        return python is None and r is None
    return python == pytest.approx(r, rel=rel, abs=ZERO)


def close_mixed(python: str, r: float, scale: float) -> bool:
    """A mixed-model number: MIXED relative to itself, or to ``scale`` (its standard error; 1 for z) when it
    is near 0. The two REML fits differ in the SE by up to MIXED relative, so an interval's end
    (estimate +- 1.96 SE) differs by up to MIXED times 1.96 SE: relative to an end near 0, far more."""
    value = _number(python)
    return value is not None and value == pytest.approx(r, rel=MIXED, abs=MIXED * scale)


# --- the flow: the numbers the pilot was built with


def test_the_flow_counts_the_participants_the_pilot_was_built_with(pilot: Pilot) -> None:
    flow = pilot.table("flow")
    total = flow[-1]
    assert total["sequence"] == "all"
    analysed = PARTICIPANTS - len(RULE_OF)
    not_completed = {"P05", "P11", "P17"}  # screened out, stopped, withdrew: P23 played every game
    assert {k: int(v) for k, v in total.items() if k not in ("sequence", "order")} == {
        "invited": PARTICIPANTS, "consented": PARTICIPANTS, "started": PARTICIPANTS,
        "completed": PARTICIPANTS - len(not_completed), "excluded_withdrawn": 1, "excluded_screened_out": 1,
        "excluded_not_completed": 1, "excluded_llm_unavailable": 1, "analysed": analysed}
    assert f"results: {analysed} participant(s) analysed, 4 excluded" in pilot.said
    sequence_of = {str(p["participant"]): str(p["sequence"]) for p in pilot.rows.participants}
    assert sorted(sequence_of) == [f"P{i:02d}" for i in range(1, PARTICIPANTS + 1)]
    invited = Counter(sequence_of.values())
    for row in flow[:-1]:
        seq = row["sequence"]
        ruled = {pid: rule for pid, rule in RULE_OF.items() if sequence_of[pid] == seq}
        assert int(row["invited"]) == int(row["started"]) == invited[seq]
        assert int(row["completed"]) == invited[seq] - len(set(ruled) & not_completed)
        for rule in RULE_OF.values():
            assert int(row[f"excluded_{rule}"]) == sum(1 for r in ruled.values() if r == rule), (seq, rule)
        assert int(row["analysed"]) == invited[seq] - len(ruled)
    assert sum(int(r["analysed"]) for r in flow[:-1]) == analysed


def test_the_analysed_data_is_every_kept_participant_in_their_order(pilot: Pilot) -> None:
    data = pilot.table("analysed")
    plan = pilot.analysis
    assert plan is not None
    kept = {f"P{i:02d}" for i in range(1, PARTICIPANTS + 1)} - set(RULE_OF)
    orders = {str(p["participant"]): str(p["order"]).split(" > ") for p in pilot.rows.participants}
    assert list(dict.fromkeys(r["outcome"] for r in data)) == [*plan.primary, *plan.secondary]
    for outcome in plan.outcomes:
        rows = [r for r in data if r["outcome"] == outcome]
        assert {r["participant"] for r in rows} == kept, outcome
        assert len(rows) == len(kept) * 3  # every kept participant played every condition once
        for r in rows:
            assert int(r["position"]) == orders[r["participant"]].index(r["condition"]) + 1
    for scale, check in pilot.r["scores"].items():  # a scale's value is the mean of its scored items (R's)
        assert check["rows"] == check["matched"] == len(kept) * 3, scale
        assert check["max_difference"] < 1e-12, scale


# --- every number against R's


def test_the_descriptives_equal_rs(pilot: Pilot) -> None:
    ours = pilot.table("descriptives")
    r = pilot.r["descriptives"]
    assert [(d["outcome"], d["condition"]) for d in ours] == [(d["outcome"], d["condition"]) for d in r]
    for mine, theirs in zip(ours, r, strict=True):
        where = (mine["outcome"], mine["condition"])
        assert int(mine["n"]) == theirs["n"] == PARTICIPANTS - len(RULE_OF), where
        for column in ("mean", "sd", "median", "q1", "q3", "iqr"):
            assert close(_number(mine[column]), theirs.get(column)), (*where, column, mine[column], theirs.get(column))


def _tests_by_key(rows: list[dict[str, Any]]) -> dict[tuple[str, str, str], dict[str, Any]]:
    keyed = {(r["outcome"], r["test"], r["comparison"]): r for r in rows}
    assert len(keyed) == len(rows)
    return keyed


def test_the_declared_tests_equal_rs(pilot: Pilot) -> None:
    ours = _tests_by_key(pilot.table("tests"))
    r = _tests_by_key(pilot.r["tests"])
    assert list(ours) == list(r)  # the same tests, in the same order: the plan's families and pairs
    plan = pilot.analysis
    assert plan is not None and plan.correction == "holm" and plan.alpha == 0.05
    differ: list[tuple[Any, ...]] = []
    for key, mine in ours.items():
        theirs = r[key]
        assert mine["family"] == theirs["family"] and int(mine["n"]) == theirs["n"], key
        test = key[1]
        if theirs.get("note") or mine["note"]:  # a test R cannot run either (see WALL_CLOCK): said, not a number
            assert mine["note"] and theirs.get("note"), (key, mine["note"], theirs.get("note"))
            assert key[0] in WALL_CLOCK, key
            assert all(mine[c] == "" for c in ("statistic", "df", "p", "p_corrected", "estimate", "significant"))
            continue
        if test == "mixed_model":
            z = theirs["statistic"]
            se = theirs["se"]  # near 0, a coefficient or an interval's end is as precise as the SE, not itself
            checks = {"estimate": close_mixed(mine["estimate"], theirs["estimate"], se),
                      "statistic": close_mixed(mine["statistic"], z, 1.0),
                      "p": close(_number(mine["p"]), theirs["p"], MIXED * max(1.0, z ** 2)),
                      "ci_low": close_mixed(mine["ci_low"], theirs["ci_low"], 2 * se),
                      "ci_high": close_mixed(mine["ci_high"], theirs["ci_high"], 2 * se)}
            differ += [(key, c, mine[c], theirs[c]) for c, same in checks.items() if not same]
            if abs(theirs["p"] - plan.alpha) > MIXED * max(1.0, z ** 2) * plan.alpha:  # not a hair's breadth away
                assert mine["significant"] == str(theirs["p"] < plan.alpha), key
            assert mine["df"] == mine["p_corrected"] == ""
            continue
        assert close(_number(mine["statistic"]), theirs["statistic"]), (key, mine["statistic"], theirs["statistic"])
        assert close(_number(mine["p"]), theirs["p"]), (key, mine["p"], theirs["p"])
        assert close(_number(mine["estimate"]), theirs["estimate"]), key
        low, high = _number(mine["ci_low"]), _number(mine["ci_high"])
        if low is not None and high is not None and key[0] not in WALL_CLOCK:  # a bootstrap interval (no R
            # counterpart: other resampling): it holds the estimate
            assert low <= float(mine["estimate"]) <= high, key
        if test == "wilcoxon":
            assert close(_number(mine["p_corrected"]), theirs["p_corrected"]), key
            assert mine["df"] == ""
        else:
            assert test == "friedman" and close(_number(mine["df"]), theirs["df"]) and mine["p_corrected"] == ""
        if abs(theirs["p_corrected" if test == "wilcoxon" else "p"] - plan.alpha) > SAME:
            assert mine["significant"] == str(theirs["significant"]).capitalize(), key
    assert not differ, "\n".join(map(str, differ))
    # both exact and normal-approximation Wilcoxon p-values were compared
    assert {t["exact"] for t in pilot.r["tests"] if t["test"] == "wilcoxon" and t["outcome"] not in WALL_CLOCK} == {
        True, False}
    assert not [k for k, t in ours.items() if t["note"] and k[0] not in WALL_CLOCK]


def test_the_effect_is_found_after_correction(pilot: Pilot) -> None:
    """The effect put on the planner's answers: significant after Holm's correction against both other
    conditions (ours and R's), the third pair not; the model's planner terms point the same way."""
    ours = _tests_by_key(pilot.table("tests"))
    r = _tests_by_key(pilot.r["tests"])
    for other in ("quiet", "wizard"):
        key = ("teamwork", "wilcoxon", f"planner vs {other}")
        assert float(ours[key]["p_corrected"]) < 0.05 and r[key]["p_corrected"] < 0.05
        assert ours[key]["significant"] == "True" and float(ours[key]["estimate"]) > 0
        model = ours["teamwork", "mixed_model", f"condition: {other}"]  # the planner is the model's reference
        assert float(model["ci_high"]) < 0 and float(model["p"]) < 0.05
    assert ours["teamwork", "wilcoxon", "quiet vs wizard"]["significant"] == "False"
    assert ours["teamwork", "friedman", "all"]["significant"] == "True"


def test_the_reliability_equals_psych(pilot: Pilot) -> None:
    ours = {r["scale"]: r for r in pilot.table("reliability")}
    items = pilot.table("item_total")
    assert set(ours) == set(pilot.r["reliability"])
    for scale, theirs in pilot.r["reliability"].items():
        mine = ours[scale]
        assert (int(mine["n"]), int(mine["k"])) == (theirs["n"], theirs["k"]), scale
        assert theirs["n"] == (PARTICIPANTS - len(RULE_OF)) * 3  # one page after each of the three games
        if theirs["k"] < 2:  # psych::alpha needs two items: the page says so in words
            assert mine["alpha"] == "" and "alpha needs at least 2" in mine["note"], scale
            assert not [i for i in items if i["scale"] == scale]
            continue
        assert mine["note"] == ""
        assert close(_number(mine["alpha"]), theirs["alpha"]), scale
        assert close(_number(mine["ci_low"]), theirs["ci"][0]) and close(_number(mine["ci_high"]), theirs["ci"][1])
        mine_items = {i["item"]: float(i["item_total"]) for i in items if i["scale"] == scale}
        assert mine_items.keys() == theirs["r_drop"].keys(), scale
        for item, value in theirs["r_drop"].items():
            assert close(mine_items[item], value), (scale, item)
    assert {s for s, t in pilot.r["reliability"].items() if t["k"] >= 2} == {"teamwork", "reliance"}
