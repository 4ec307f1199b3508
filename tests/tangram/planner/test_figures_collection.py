"""The collection benchmark (benchmarks/tangram/bench_figures_collection.py) reads the forms it says it
reads and counts exact / nearest / none as the matcher does (issue 32, "Done when"). The texts here
are made up for the test; no published collection is used."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.games.tangram.planner.library import load_library
from benchmarks.tangram import bench_figures_collection as bench

LIBRARY = load_library()
TEXTS = ["a camel walking", "a cow", "a spoon", "two ducks", "kitty"]
"""exact, nearest (horse), none, exact (swan), exact (cat)."""


def _kilogram_layout(path: Path) -> Path:
    data = {"fig-1": {"snd": 0.5, "annotations": [{"whole": {"wholeAnnotation": t, "timestamp": "x"}, "part": {}}
                                                   for t in TEXTS[:3]]},
            "fig-2": {"annotations": [{"whole": {"wholeAnnotation": t}} for t in TEXTS[3:]]}}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_reads_the_kilogram_layout_with_the_figure_each_text_was_written_for(tmp_path: Path) -> None:
    pairs = bench.read_descriptions(_kilogram_layout(tmp_path / "dense.json"))
    assert pairs == [("fig-1", t) for t in TEXTS[:3]] + [("fig-2", t) for t in TEXTS[3:]]


def test_reads_the_earlier_kilogram_layout(tmp_path: Path) -> None:
    (tmp_path / "full.json").write_text(json.dumps({"fig-1": [{"whole": t, "piece": {"1": "x"}} for t in TEXTS]}),
                                        encoding="utf-8")
    assert bench.read_descriptions(tmp_path / "full.json") == [("fig-1", t) for t in TEXTS]


def test_reads_a_json_list_and_a_text_file(tmp_path: Path) -> None:
    (tmp_path / "list.json").write_text(json.dumps([TEXTS[0], {"text": TEXTS[1]}, {"description": TEXTS[2]}]),
                                        encoding="utf-8")
    assert [t for _, t in bench.read_descriptions(tmp_path / "list.json")] == TEXTS[:3]
    (tmp_path / "texts.txt").write_text("# made up\n\n" + "\n".join(f"{t} | ignored" for t in TEXTS) + "\n",
                                        encoding="utf-8")
    assert [t for _, t in bench.read_descriptions(tmp_path / "texts.txt")] == TEXTS


def test_counts_exact_nearest_and_none_as_the_matcher_does(tmp_path: Path) -> None:
    rows = bench.match_all(bench.read_descriptions(_kilogram_layout(tmp_path / "dense.json")), LIBRARY)
    assert [(r.kind, r.figure) for r in rows] == [("exact", "camel"), ("nearest", "horse"), ("none", "-"),
                                                   ("exact", "swan"), ("exact", "cat")]
    s = bench.summary(rows)
    assert (s["exact"], s["nearest"], s["none"], s["hit"]) == pytest.approx((0.6, 0.2, 0.2, 0.8))


def test_prints_the_hit_rate_and_fails_below_the_goal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _kilogram_layout(tmp_path / "dense.json")
    assert bench.main([str(path), "--sample", "2", "--misses", "3"]) == 0
    out = capsys.readouterr().out
    assert "a figure for the thing named (exact + nearest): 80.0%" in out
    assert "'a spoon' (1)" in out and "spoon (1)" in out  # the misses: texts, then words
    assert bench.main([str(path), "--goal", "0.9"]) == 1
