"""``python -m agent.analyze --study FILE --results OUT``: the study file's analysis plan run on the
study's data, written to ``OUT``: ``results.html`` (one self-contained page) and a CSV file of every
number on it (flow, descriptives, tests, reliability, item_total) and of the data the tests read
(analysed: each outcome's value per analysed participant and condition, so that anyone can run the
analysis again elsewhere, e.g. in R), described in the results' own ``datapackage.json``. The same
data gives the same bytes.

The steps, one module each: the exclusion rules (exclusions.py), the outcomes as long data from the
scores table (measures.py), the flow (flow.py), the declared tests (declared.py, over
statistics.py), the tables (report_tables.py), the figures (figures.py) and the page (page.py).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import Any

from agent.analyze.results import statistics as stats
from agent.analyze.results.declared import omnibus_test, pairwise_test, run_declared
from agent.analyze.results.exclusions import RULES, excluded
from agent.analyze.results.figures import outcome_figure
from agent.analyze.results.flow import flow_rows
from agent.analyze.results.measures import kind_of, long_data, scale_items
from agent.analyze.results.page import render
from agent.analyze.results.report_tables import (
    COLUMNS,
    TITLES,
    analysed_rows,
    descriptive_rows,
    reliability_rows,
    test_rows,
)
from agent.analyze.study_join import StudyRows
from agent.analyze.tables import Tables
from agent.core.studies.analysis_plan import GAME_MEASURES
from agent.core.studies.metadata import agent_version

PAGE = "results.html"
PACKAGE = "datapackage.json"


class ResultsError(Exception):
    """The results cannot be written as asked; one line."""


@dataclass(frozen=True)
class Written:
    page: Path
    files: list[Path]
    analysed: int
    excluded: dict[str, int]
    other_plans: list[str]
    """Analysis plan hashes the sessions recorded that are not the study file's now (a plan changed
    after sessions were played)."""


def _csv_text(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    buffer = StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({c: "" if row.get(c) is None else row[c] for c in columns})
    return buffer.getvalue()


def _column_type(rows: Sequence[Mapping[str, Any]], column: str) -> str:
    values = [r.get(column) for r in rows if r.get(column) is not None]
    if values and all(isinstance(v, bool) for v in values):
        return "boolean"
    if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "integer"
    if values and all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return "number"
    return "string"


def _package(tables: Mapping[str, tuple[list[dict[str, Any]], list[str]]], meta: Mapping[str, Any]) -> str:
    import json

    resources = [{"name": name.replace("_", "-"), "path": f"{name}.csv", "profile": "tabular-data-resource",
                  "format": "csv", "mediatype": "text/csv", "encoding": "utf-8", "description": TITLES[name],
                  "schema": {"fields": [{"name": c, "type": _column_type(rows, c), "description": COLUMNS[c]}
                                        for c in columns]}}
                 for name, (rows, columns) in tables.items()]
    name = re.sub(r"[^a-z0-9._-]+", "-", f"{meta['study']}-results".lower())
    package = {"profile": "tabular-data-package", "name": name,
               "title": f"Results of study {meta['study']}", "resources": resources,
               **{k: v for k, v in meta.items() if k != "study"}}
    return json.dumps(package, indent=2, ensure_ascii=False) + "\n"


def write_results(tables: Tables, study: StudyRows, out: Path) -> Written:
    """Run the study's analysis plan on ``tables`` (joined to ``study``) and write ``out``."""
    plan = study.analysis
    if plan is None:
        raise ResultsError(f"study {study.study}: the study file declares no analysis plan (analysis: primary: ...; "
                           "see docs/study.md, 'From data to results')")
    conditions = list(study.conditions)
    within = study.design == "within"
    left_out = excluded(study.participants, tables.sessions, plan.exclude)
    keep = {str(p["participant"]) for p in study.participants} - set(left_out)
    data = {o: long_data(tables.scores, o, keep) for o in plan.outcomes}
    analysed = {pid for o in plan.primary for pid in data[o]["participant"]}
    flow = flow_rows(study.participants, left_out, analysed, study.consent_asked, study.invited)
    descriptives = descriptive_rows(data, conditions)
    declared = run_declared(plan, study.design, conditions, data)
    tests = test_rows(declared, plan.alpha)
    scales = sorted({str(a["scale"]) for a in study.answers if a.get("scale") and a.get("when") == "after_each"})
    found = [stats.reliability(scale_items(study.answers, s, keep), s) for s in scales]
    reliability, items = reliability_rows(found)
    csvs: dict[str, tuple[list[dict[str, Any]], list[str]]] = {
        "flow": (flow, list(flow[0])),
        "descriptives": (descriptives, ["outcome", "kind", "condition", "n", "mean", "sd", "median", "q1", "q3",
                                        "iqr"]),
        "tests": (tests, ["outcome", "family", "test", "comparison", "n", "statistic", "df", "df2", "p",
                          "p_corrected", "effect", "estimate", "ci_low", "ci_high", "significant", "note"]),
        "reliability": (reliability, ["scale", "n", "k", "alpha", "ci_low", "ci_high", "note"]),
        "item_total": (items, ["scale", "item", "item_total"]),
    }
    inputs = analysed_rows(data)
    data_csvs = {"analysed": (inputs, ["participant", "condition", "position", "outcome", "value"])}
    figures = [outcome_figure(data[o], o, conditions, _label(o), within) for o in plan.outcomes]
    recorded = sorted({str(s["analysis_sha256"]) for s in tables.sessions
                       if s.get("participant") and s.get("analysis_sha256")} - {str(study.meta["analysis_sha256"])})
    total = flow[-1]
    context = {
        "study": study.study, "agent_version": agent_version(), "plan_sha256": study.plan_sha256,
        "analysis_sha256": study.meta["analysis_sha256"], "recorded_other": recorded, "design": study.design,
        "conditions": conditions, "files": [f"{name}.csv" for name in csvs],
        "data_files": [f"{name}.csv" for name in data_csvs], "plan": plan,
        "control": plan.control, "pairwise": pairwise_test(plan, study.design),
        "omnibus": omnibus_test(plan, study.design) if len(conditions) > 2 else None,
        "mixed": within and plan.mixed_model,
        "rules": [r for r in RULES if _rule_on(plan.exclude, r)],
        "share_text": f"{plan.exclude.llm_unavailable_share:.0%}" if plan.exclude.llm_unavailable_share is not None
        else "",
        "flow": flow, "flow_columns": list(flow[0]), "total": total,
        "excluded_total": sum(total[f"excluded_{r}"] for r in RULES),
        "descriptives": descriptives, "tests": tests,
        "reliability": [{**r, "items": [i for i in items if i["scale"] == r["scale"]]} for r in reliability],
        "figures": figures,
    }
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, (rows, columns) in {**csvs, **data_csvs}.items():
        path = out / f"{name}.csv"
        path.write_text(_csv_text(rows, columns), encoding="utf-8")
        written.append(path)
    meta = {"study": study.study, "plan_sha256": study.plan_sha256, "analysis_sha256": study.meta["analysis_sha256"],
            "agent_version": agent_version()}
    (out / PACKAGE).write_text(_package({**csvs, **data_csvs}, meta), encoding="utf-8")
    page = out / PAGE
    page.write_text(render(context), encoding="utf-8")
    return Written(page, [*written, out / PACKAGE], int(total["analysed"]),
                   {r: int(total[f"excluded_{r}"]) for r in RULES}, recorded)


def _rule_on(spec: Any, rule: str) -> bool:
    if rule == "llm_unavailable":
        return spec.llm_unavailable_share is not None
    return bool(getattr(spec, rule))


def _label(outcome: str) -> str:
    if outcome in GAME_MEASURES:
        return GAME_MEASURES[outcome]
    return f"{outcome} ({kind_of(outcome)} score)"
