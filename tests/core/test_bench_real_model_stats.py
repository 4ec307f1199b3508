"""The real-model benchmark's numbers, from transcript records (no server needed)."""

from __future__ import annotations

from benchmarks.llm_real.bench_real_model import llm_stats, table
from benchmarks.llm_real.runs import Run


def _call(outcome: str, latency: float, **kw: object) -> dict[str, object]:
    return {"kind": "llm", "purpose": "play", "outcome": outcome, "latency_s": latency, "prompt_tokens": 1000,
            "prompt_estimate": 900, "reusable_share": 0.8, **kw}


def test_skipped_and_cancelled_calls_are_counted_apart_and_the_reusable_share_is_shown() -> None:
    records = [
        _call("ok", 30.0, reusable_share=0.0),
        _call("ok", 8.0),
        _call("error", 9.0, finish_reason="length", reasked_cut=True),
        {"kind": "llm", "purpose": "play", "outcome": "skipped", "latency_s": 0.0},
        _call("ok", 7.0, prompt_form="compact"),
        {"kind": "llm", "purpose": "coach", "outcome": "cancelled", "cause": "match over", "latency_s": 3.0},
        {"kind": "llm", "purpose": "play", "outcome": "cancelled", "elapsed_s": 8.0},  # a turn's time limit
        {"kind": "llm", "purpose": "chat", "outcome": "ok", "latency_s": 1.0},
        {"kind": "llm_endpoint", "refused_requests": 1, "structured_output": "json_object_schema"},
    ]
    stats = llm_stats(Run(records, decisions=5, by_model=3, detail={}))
    assert stats["calls"] == 5 and stats["ok"] == 3 and stats["skipped"] == 1 and stats["compact"] == 1
    assert stats["cancelled"] == 1
    assert stats["first_s"] == 30.0 and stats["later_p50_s"] == 8.0
    assert stats["cut"] == 1 and stats["reasked"] == 1 and stats["refused"] == 1
    assert stats["reusable_p50"] == 0.8
    row = table({"tangram": stats}).splitlines()[-1]
    assert "| 3 (60 %) | 3 of 5 (60 %) |" in row and "| 80 % |" in row and row.endswith("| 1 | 1 | 1 |")
