"""agent/analyze/results/statistics.py against R: fixed data sets (paired with ties and zeros, paired
without, repeated measures, a mixed model with an order effect, two between-subject sets, a five-item
scale with a reverse-keyed item, a family of p-values) go to one Rscript run (tests/core/r/), whose
numbers the Python results must equal; then the edge cases that give a note instead of numbers.

Tolerances: 1e-6 relative where Python and R use the same method (the statistics, p-values, degrees of
freedom and t intervals are the same arithmetic, so they agree to rounding); 1e-4 for the mixed model
(both reach the same REML optimum, to 1e-10 in the log-likelihood, but statsmodels takes the fixed
effects' standard errors from the observed information of every parameter, variances included, and
lme4 from (X' V^-1 X)^-1 at the fitted variances: they differ by about 4e-5 relative, a p-value by about
that times z²); 1e-6 absolute for the partial eta squared interval (two root finders on two
implementations of the noncentral F). The bootstrap intervals of the rank-based effect sizes cannot be
compared with R (other resampling); their estimates are, and the intervals are checked for shape and
for being the same on every run.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from agent.analyze.results.statistics import (
    Description,
    TestResult,
    correct,
    describe,
    friedman,
    kruskal,
    mann_whitney,
    mixed_model,
    paired_t,
    reliability,
    rm_anova,
    welch,
    wilcoxon_paired,
)

R_SCRIPT = Path(__file__).with_name("r") / "analyze_statistics.R"
RSCRIPT = shutil.which("Rscript")
SAME = 1e-6  # relative: the same method in Python and in R
MIXED = 1e-4  # relative: two REML optimisers
ETA_CI = 1e-6  # absolute: two noncentral-F root finders
ORDERS = [("A", "B", "C"), ("A", "C", "B"), ("B", "A", "C"), ("B", "C", "A"), ("C", "A", "B"), ("C", "B", "A")]
P_VALUES = [0.001, 0.01, 0.02, 0.04, 0.3, 0.5]


def _long(rows: list[tuple[str, str, int, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["participant", "condition", "position", "value"])


def _paired_ties() -> pd.DataFrame:
    """16 participants, integer scores: tied and zero differences; P15 has no B (left out of the pair)."""
    rng = np.random.default_rng(661)
    a = rng.integers(3, 9, 16)
    b = a - rng.integers(-1, 3, 16)
    rows = []
    for i in range(16):
        first, second = ("A", "B") if i % 2 else ("B", "A")
        values = {"A": float(a[i]), "B": float(b[i])}
        rows += [(f"P{i:02d}", c, pos, values[c]) for pos, c in enumerate((first, second), 1)]
    return _long([r for r in rows if not (r[0] == "P15" and r[1] == "B")])


def _paired_exact() -> pd.DataFrame:
    """10 participants, continuous scores: no zero or tied difference (the exact Wilcoxon p-value)."""
    rng = np.random.default_rng(662)
    a = np.round(rng.normal(5, 1, 10), 3)
    b = np.round(a - rng.normal(0.6, 1, 10), 3)
    pairs = [(("A", a[i]), ("B", b[i])) for i in range(10)]
    return _long([(f"P{i:02d}", c, pos, v) for i, pair in enumerate(pairs) for pos, (c, v) in enumerate(pair, 1)])


def _repeated() -> pd.DataFrame:
    """12 participants rate 3 conditions on 1..7 (ties within participants), orders from a Latin square."""
    rng = np.random.default_rng(663)
    rows = []
    for i in range(12):
        for pos, c in enumerate(ORDERS[i % 6], 1):
            value = np.clip(np.round(4 + {"A": 0, "B": 0.7, "C": 1.2}[c] + rng.normal(0, 1.2)), 1, 7)
            rows.append((f"P{i:02d}", c, pos, float(value)))
    return _long(rows)


def _mixed() -> pd.DataFrame:
    """18 participants, 3 conditions in every order, an order effect of 0.8 a position and a random
    intercept; P05 lacks condition C (the model keeps the rest of P05's values)."""
    rng = np.random.default_rng(664)
    rows = []
    for i in range(18):
        intercept = rng.normal(0, 1.5)
        for pos, c in enumerate(ORDERS[i % 6], 1):
            value = 10 + {"A": 0, "B": 1, "C": 2}[c] + 0.8 * pos + intercept + rng.normal(0, 1)
            rows.append((f"P{i:02d}", c, pos, round(float(value), 2)))
    return _long([r for r in rows if not (r[0] == "P05" and r[1] == "C")])


def _mixed_boundary() -> pd.DataFrame:
    """12 participants in an AB/BA crossover with no participant effect: the participants' variance is
    estimated at its bound of 0 (lme4's "singular fit"), where statsmodels' gradient optimisers stop short."""
    rng = np.random.default_rng(3)
    orders = [("A", "B") if i % 2 else ("B", "A") for i in range(12)]
    rows = [(f"P{i:02d}", c, pos) for i, order in enumerate(orders) for pos, c in enumerate(order, 1)]
    return _long([(p, c, pos, float(rng.normal())) for p, c, pos in rows])


def _between(ties: bool) -> pd.DataFrame:
    """Unbalanced groups, one value per participant: integers with ties (A 9, B 12, C 7), or distinct
    continuous values (A 6, B 8: the exact Mann-Whitney p-value)."""
    rng = np.random.default_rng(665 if ties else 666)
    sizes = {"A": 9, "B": 12, "C": 7} if ties else {"A": 6, "B": 8}
    rows = []
    for c, size in sizes.items():
        shift = {"A": 0.0, "B": 1.0, "C": 0.5}[c]
        values = np.round(rng.normal(5 + shift, 1.5, size)) if ties else np.round(rng.normal(5 + shift, 1.5, size), 3)
        rows += [(f"{c}{j:02d}", c, 1, float(v)) for j, v in enumerate(values)]
    return _long(rows)


def _items() -> pd.DataFrame:
    """30 answers to five 1..7 items driven by one trait; the fourth is reverse-keyed (raw here)."""
    rng = np.random.default_rng(667)
    trait = rng.normal(0, 1.2, 30)
    columns = {}
    for j in range(5):
        raw = np.clip(np.round(4 + trait + rng.normal(0, 1, 30)), 1, 7)
        columns["i4_reversed" if j == 3 else f"i{j + 1}"] = 8 - raw if j == 3 else raw
    return pd.DataFrame(columns)


def _scored(items: pd.DataFrame) -> pd.DataFrame:
    return items.assign(i4_reversed=8 - items["i4_reversed"])


DATA = {
    "paired_ties": _paired_ties(),
    "paired_exact": _paired_exact(),
    "repeated": _repeated(),
    "mixed": _mixed(),
    "mixed_boundary": _mixed_boundary(),
    "between_ties": _between(ties=True),
    "between_exact": _between(ties=False),
}


@pytest.fixture(scope="module")
def r_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every data set through R once (about 2 s: starting R and loading lme4 is most of it)."""
    if RSCRIPT is None:
        pytest.skip("Rscript not found: install r-base-core r-cran-lme4 r-cran-lmertest r-cran-psych r-cran-jsonlite")
    folder = tmp_path_factory.mktemp("r_statistics")
    for name, frame in DATA.items():
        frame.to_csv(folder / f"{name}.csv", index=False)
    _items().to_csv(folder / "items.csv", index=False)
    pd.DataFrame({"p": P_VALUES}).to_csv(folder / "pvalues.csv", index=False)
    out = folder / "r.json"
    run = subprocess.run(
        [RSCRIPT, "--vanilla", str(R_SCRIPT), str(folder), str(out)], capture_output=True, text=True, timeout=90
    )
    assert run.returncode == 0, f"Rscript failed:\n{run.stderr}"
    return json.loads(out.read_text(encoding="utf-8"))


def close(python: float | None, r: float, rel: float = SAME, abs_: float = 1e-12) -> bool:
    return python is not None and python == pytest.approx(r, rel=rel, abs=abs_)


def test_the_data_sets_exercise_what_they_claim() -> None:
    d = DATA["paired_ties"].pivot(index="participant", columns="condition", values="value").dropna()
    diff = (d["A"] - d["B"]).to_numpy()
    assert (diff == 0).any() and len(np.unique(np.abs(diff[diff != 0]))) < (diff != 0).sum()
    d = DATA["paired_exact"].pivot(index="participant", columns="condition", values="value")
    diff = (d["A"] - d["B"]).to_numpy()
    assert (diff != 0).all() and len(np.unique(np.abs(diff))) == len(diff)
    values = DATA["between_exact"]["value"]
    assert values.nunique() == len(values)
    assert set(np.unique(_items().to_numpy())) >= {1.0, 7.0}  # psych reverses as max + min - x: 8 - x


@pytest.mark.parametrize("name", ["paired_ties", "paired_exact"])
def test_wilcoxon_and_paired_t_equal_rs(r_results: dict[str, Any], name: str) -> None:
    r = r_results[name]
    w = wilcoxon_paired(DATA[name], "A", "B", "score")
    assert w.n == r["n"] == (15 if name == "paired_ties" else 10)
    assert close(w.statistic, r["wilcoxon"]["statistic"]) and close(w.p, r["wilcoxon"]["p"])
    assert close(w.estimate, r["rank_biserial"])
    assert w.ci_low is not None and w.ci_high is not None and -1 <= w.ci_low <= w.ci_high <= 1
    t = paired_t(DATA[name], "A", "B", "score")
    assert t.n == r["n"]
    assert close(t.statistic, r["t"]["statistic"]) and close(t.df, r["t"]["df"]) and close(t.p, r["t"]["p"])
    assert close(t.estimate, r["t"]["estimate"])
    assert close(t.ci_low, r["t"]["ci"][0]) and close(t.ci_high, r["t"]["ci"][1])


def test_friedman_and_repeated_measures_anova_equal_rs(r_results: dict[str, Any]) -> None:
    r = r_results["repeated"]
    f = friedman(DATA["repeated"], "rating")
    assert f.n == r["n"] == 12
    assert close(f.statistic, r["friedman"]["statistic"]) and close(f.df, r["friedman"]["df"])
    assert close(f.p, r["friedman"]["p"]) and close(f.estimate, r["friedman"]["w"])
    assert f.ci_low is not None and f.ci_high is not None and 0 <= f.ci_low <= f.ci_high <= 1
    a = rm_anova(DATA["repeated"], "rating")
    assert close(a.statistic, r["anova"]["statistic"]) and close(a.df, r["anova"]["df"])
    assert close(a.df2, r["anova"]["df2"]) and close(a.p, r["anova"]["p"])
    assert close(a.estimate, r["anova"]["eta"])  # R's from the sums of squares, ours from F
    assert a.ci_low == pytest.approx(r["anova"]["ci"][0], abs=ETA_CI)
    assert a.ci_high == pytest.approx(r["anova"]["ci"][1], abs=ETA_CI)


@pytest.mark.parametrize("name", ["mixed", "mixed_boundary"])
def test_the_mixed_model_equals_lme4(r_results: dict[str, Any], name: str) -> None:
    r = r_results[name]
    assert r["singular"] == (name == "mixed_boundary")
    results = mixed_model(DATA[name], "score")
    terms = ["condition: B", "condition: C", "position"] if name == "mixed" else ["condition: B", "position"]
    assert [m.comparison for m in results] == terms == list(r["terms"])
    for m in results:
        expected = r["terms"][m.comparison]
        assert m.n == r["n"] == len(DATA[name]["participant"].unique()) and m.note is None
        assert close(m.estimate, expected["estimate"], MIXED), m.comparison
        assert m.statistic is not None and m.estimate is not None
        assert close(m.estimate / m.statistic, expected["se"], MIXED), m.comparison  # the standard error
        assert close(m.statistic, expected["z"], MIXED), m.comparison
        # p falls steeply in the tail: a relative error e in z is about z² e in p
        assert close(m.p, expected["p_wald"], MIXED * max(1.0, expected["z"] ** 2)), m.comparison
        assert close(m.ci_low, expected["ci"][0], MIXED) and close(m.ci_high, expected["ci"][1], MIXED)
    if name == "mixed":
        position = results[-1]
        assert position.ci_low is not None and position.ci_low > 0  # the order effect put into the data is found


def test_a_named_control_changes_the_reference() -> None:
    results = mixed_model(DATA["mixed"], "score", control="C")
    assert [m.comparison for m in results] == ["condition: A", "condition: B", "position"]
    default = {m.comparison: m.estimate for m in mixed_model(DATA["mixed"], "score")}
    assert results[0].estimate == pytest.approx(-default["condition: C"], abs=1e-6)


@pytest.mark.parametrize("name", ["between_ties", "between_exact"])
def test_between_subject_tests_equal_rs(r_results: dict[str, Any], name: str) -> None:
    r = r_results[name]
    m = mann_whitney(DATA[name], "A", "B", "score")
    assert close(m.statistic, r["mann_whitney"]["statistic"]) and close(m.p, r["mann_whitney"]["p"])
    assert close(m.estimate, r["mann_whitney"]["r"])
    assert m.ci_low is not None and m.ci_high is not None and -1 <= m.ci_low <= m.ci_high <= 1
    w = welch(DATA[name], "A", "B", "score")
    assert close(w.statistic, r["welch"]["statistic"]) and close(w.df, r["welch"]["df"]) and close(w.p, r["welch"]["p"])
    assert close(w.ci_low, r["welch"]["ci"][0]) and close(w.ci_high, r["welch"]["ci"][1])
    assert close(w.estimate, r["welch"]["estimate"][0] - r["welch"]["estimate"][1])
    k = kruskal(DATA[name], "score")
    assert k.n == r["n"]
    assert close(k.statistic, r["kruskal"]["statistic"]) and close(k.df, r["kruskal"]["df"])
    assert close(k.p, r["kruskal"]["p"])


def test_reliability_equals_psych(r_results: dict[str, Any]) -> None:
    r = r_results["items"]
    rel = reliability(_scored(_items()), "trust")
    assert rel.n == r["n"] == 30 and rel.k == 5 and rel.note is None
    assert close(rel.alpha, r["alpha"]) and close(rel.ci_low, r["ci"][0]) and close(rel.ci_high, r["ci"][1])
    assert rel.item_total.keys() == r["r_drop"].keys()
    for item, value in r["r_drop"].items():
        assert close(rel.item_total[item], value), item


def test_corrections_equal_p_adjust(r_results: dict[str, Any]) -> None:
    results = [_result(p) for p in P_VALUES] + [_result(None)]
    for method in ("holm", "bonferroni", "fdr_bh"):
        corrected = correct(results, method)  # type: ignore[arg-type]
        assert all(close(c.p_corrected, p) for c, p in zip(corrected, r_results["adjust"][method], strict=False))
        assert corrected[-1].p_corrected is None  # a test not run is no member of the family
    assert [c.p_corrected for c in correct(results, "none")] == [*P_VALUES, None]


def test_the_same_data_gives_the_same_numbers() -> None:
    """Bootstrap intervals come from a fixed seed: the results page is the same byte for byte."""
    assert wilcoxon_paired(DATA["paired_ties"], "A", "B", "s") == wilcoxon_paired(DATA["paired_ties"], "A", "B", "s")
    assert kruskal(DATA["between_ties"], "s") == kruskal(DATA["between_ties"], "s")


def _result(p: float | None) -> TestResult:
    return TestResult("x", "wilcoxon", "A vs B", 10, None, None, None, p, None, None, None, None, None, None)


# --- edge cases: a note in plain words, and no numbers


def _numbers(result: TestResult) -> list[float | None]:
    return [result.statistic, result.df, result.p, result.estimate, result.ci_low, result.ci_high]


def test_too_few_pairs_give_a_note_and_no_numbers() -> None:
    data = DATA["paired_exact"][DATA["paired_exact"]["participant"].isin(["P00", "P01"])]
    for test in (wilcoxon_paired, paired_t):
        result = test(data, "A", "B", "score")
        assert result.n == 2 and _numbers(result) == [None] * 6
        assert result.note is not None and "only 2 participants have both A and B" in result.note


def test_a_participant_missing_one_condition_is_left_out_of_that_pair() -> None:
    data = DATA["paired_exact"]
    without = data[~((data["participant"] == "P03") & (data["condition"] == "B"))]
    reduced = data[data["participant"] != "P03"]
    assert wilcoxon_paired(without, "A", "B", "s") == wilcoxon_paired(reduced, "A", "B", "s")
    assert paired_t(without, "A", "B", "s").n == 9
    gone = (data["participant"] == "P03") & (data["condition"] == "B")
    missing_value = data.assign(value=np.where(gone, np.nan, data["value"]))
    assert paired_t(missing_value, "A", "B", "s") == paired_t(reduced, "A", "B", "s")
    no_b = data.assign(value=np.where(data["condition"] == "B", np.nan, data["value"]))
    assert wilcoxon_paired(no_b, "A", "B", "s").n == 0  # B named in the data, but with no value
    rm = DATA["repeated"]
    assert friedman(rm[~((rm["participant"] == "P00") & (rm["condition"] == "C"))], "s").n == 11


def test_no_variance_gives_a_note() -> None:
    same = DATA["paired_exact"].assign(value=3.0)
    assert "no difference to test" in (wilcoxon_paired(same, "A", "B", "s").note or "")
    assert "no difference to test" in (paired_t(same, "A", "B", "s").note or "")
    shifted = same.assign(value=np.where(same["condition"] == "A", 4.0, 3.0))
    t = paired_t(shifted, "A", "B", "s")
    assert t.p is None and "do not vary" in (t.note or "")
    assert wilcoxon_paired(shifted, "A", "B", "s").p is not None  # every difference positive: Wilcoxon runs
    flat = DATA["repeated"].assign(value=5.0)
    for result in (friedman(flat, "s"), rm_anova(flat, "s")):
        assert _numbers(result) == [None] * 6 and "no variance" in (result.note or "")
    flat_between = DATA["between_ties"].assign(value=1.0)
    for result in (
        mann_whitney(flat_between, "A", "B", "s"), welch(flat_between, "A", "B", "s"), kruskal(flat_between, "s")
    ):
        assert result.p is None and "no variance" in (result.note or "")
    flat_mixed = mixed_model(DATA["mixed"].assign(value=2.0), "s")
    assert all(m.p is None and "no variance" in (m.note or "") for m in flat_mixed)


def test_too_few_conditions_or_participants_give_notes() -> None:
    two = DATA["paired_exact"]
    result = friedman(two, "s")
    assert result.p is None and "at least 3 conditions" in (result.note or "")
    assert rm_anova(two, "s").p is not None  # the ANOVA runs on two conditions
    few = DATA["mixed"][DATA["mixed"]["participant"].isin(["P00", "P01"])]
    assert all("only 2 participants" in (m.note or "") for m in mixed_model(few, "s"))
    small = DATA["between_ties"][~DATA["between_ties"]["participant"].isin([f"A{j:02d}" for j in range(1, 9)])]
    assert "A has 1 observations" in (welch(small, "A", "B", "s").note or "")


def test_one_order_for_everyone_cannot_separate_condition_from_position() -> None:
    data = DATA["paired_exact"]
    same_order = data.assign(position=np.where(data["condition"] == "A", 1, 2))
    results = mixed_model(same_order, "s")
    assert all(m.p is None and "cannot be told apart" in (m.note or "") for m in results)


def test_reliability_edge_cases() -> None:
    one_item = reliability(pd.DataFrame({"a": [1.0, 2.0, 3.0]}), "s")
    assert one_item.alpha is None and "1 items" in (one_item.note or "")
    rows = reliability(pd.DataFrame({"a": [1.0, np.nan, 3.0], "b": [2.0, 2.0, np.nan]}), "s")
    assert rows.n == 1 and rows.alpha is None and rows.note is not None
    flat = reliability(pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [3.0, 2.0, 1.0]}), "s")
    assert flat.alpha is None and "does not vary" in (flat.note or "")


def test_bad_input_is_named() -> None:
    with pytest.raises(ValueError, match="lacks the column"):
        paired_t(pd.DataFrame({"participant": ["a"], "value": [1.0]}), "A", "B", "s")
    with pytest.raises(ValueError, match="no condition 'Z'"):
        wilcoxon_paired(DATA["paired_exact"], "A", "Z", "s")
    twice = pd.concat([DATA["paired_exact"], DATA["paired_exact"].iloc[:1]])
    with pytest.raises(ValueError, match="more than one row for condition A"):
        paired_t(twice, "A", "B", "s")
    with pytest.raises(ValueError, match="value must be a number"):
        paired_t(DATA["paired_exact"].assign(value="x"), "A", "B", "s")
    with pytest.raises(ValueError, match="unknown correction"):
        correct([], "sidak")  # type: ignore[arg-type]


def test_describe_uses_rs_default_quartiles() -> None:
    # R: quantile(c(1, 2, 4, 7, 11), type = 7) -> 2, 4, 7; sd -> 4.0620192...
    d = describe([1, 2, 4, np.nan, 7, 11])
    assert (d.n, d.median, d.q1, d.q3, d.mean) == (5, 4.0, 2.0, 7.0, 5.0)
    assert d.sd == pytest.approx(np.sqrt(16.5))
    assert describe([]) == Description(0, None, None, None, None, None)
    assert describe([3.0]).sd is None
