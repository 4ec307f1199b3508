"""Each local-model tangram turn against its one-call limit (issue 69).

    python -m benchmarks.llm_real.bench_local_turns [--games 2] [--turns 5] [--seed 1] [--threads N]
        [--batch-threads N] [--keep DIR]                       # the simulator, on a server started here
    python -m benchmarks.llm_real.bench_local_turns --transcripts DIR
                                                               # a finished run, e.g. the real game:
    python -m benchmarks.tangram.real_game --gaips /tmp/gaips --template /tmp/tpl/package/godot \\
        --local-model --out DIR ...; then --transcripts DIR

For every AI turn the model played, from the transcripts (the ``llm`` records carry the server's own
counts and times, :mod:`agent.core.llm.server_times`; ``turn_end`` the turn's wall time):

- turn wall time (``turn_end.seconds``: the playRequest to the finish);
- the one-call limit *measured in the same run*: the turn's prompt (the server's full count of its first
  call) read at the prompt speed the server measured in that run, plus the tokens the turn's answer
  generated at the generation speed it measured in that run: what one uncached call of that size costs
  on that machine under that load (beside Chromium, for the real game);
- their ratio (the goal: at most 1.5 in the simulator, at most 2 in the real game);
- calls per turn, prompt tokens per call and the share of them the server reused from its cache.

Run on its own (the [local] extra; minutes on 2 cores), not by ``make bench``. The simulator run also
makes one direct call of the first turn's size (no agent, no game, a cold cache) and prints it beside
the limit computed from the speeds, as a check of that arithmetic.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.core.llm.server_times import parse_log
from agent.core.local_model import MODEL_ALIAS, LocalModelError, LocalModelServer
from benchmarks.llm_real import runs


@dataclass
class Turn:
    wall_s: float
    source: str
    calls: list[dict[str, Any]]
    """The turn's sent decision calls (play, feedback, re-ask) with the server's numbers."""
    skipped: int

    @property
    def by_model(self) -> bool:
        return self.source.startswith("llm")


def turns_of(records: list[dict[str, Any]]) -> list[Turn]:
    """The AI turns in transcript order: each turn_start .. turn_end span of one session."""
    out: list[Turn] = []
    current: dict[str, Any] | None = None
    for record in records:
        kind = record.get("kind")
        if kind == "turn_start":
            current = {"calls": [], "skipped": 0, "source": ""}
        elif current is None:
            continue
        elif kind == "llm" and record.get("purpose") != "chat":
            if record.get("outcome") == "skipped":
                current["skipped"] += 1
            else:
                current["calls"].append(record)
        elif kind == "decision" and not record.get("adjust") and not current["source"]:
            current["source"] = str(record.get("source", ""))
        elif kind == "turn_end":
            out.append(Turn(float(record.get("seconds") or 0.0), current["source"], current["calls"],
                            current["skipped"]))
            current = None
    return out


def speeds(calls: list[dict[str, Any]]) -> tuple[float, float] | None:
    """Prompt tokens read a second and tokens generated a second, as the server measured them in these calls."""
    timed = [c["server"] for c in calls if isinstance(c.get("server"), dict)]
    read = [(s["prompt_tokens"] - s["cached_tokens"], s["prompt_ms"]) for s in timed
            if s["prompt_ms"] > 0 and s["prompt_tokens"] - s["cached_tokens"] >= 64]
    made = [(s["generated_tokens"], s["generate_ms"]) for s in timed if s["generate_ms"] > 0 and s["generated_tokens"]]
    if not read or not made:
        return None
    return (1000 * sum(n for n, _ in read) / sum(ms for _, ms in read),
            1000 * sum(n for n, _ in made) / sum(ms for _, ms in made))


def one_call_limit(turn: Turn, rates: tuple[float, float]) -> float | None:
    timed = [c["server"] for c in turn.calls if isinstance(c.get("server"), dict)]
    if not timed:
        return None
    read_rate, make_rate = rates
    generated = sum(s["generated_tokens"] for s in timed) / len(timed)
    return timed[0]["prompt_tokens"] / read_rate + generated / make_rate


def report(name: str, records: list[dict[str, Any]]) -> dict[str, Any]:
    turns = turns_of(records)
    every = [c for t in turns for c in t.calls]
    rates = speeds(every)
    model_turns = [t for t in turns if t.by_model and t.calls]
    rows = []
    for t in model_turns:
        limit = one_call_limit(t, rates) if rates else None
        rows.append((t, limit))
    ratios = [t.wall_s / limit for t, limit in rows if limit]
    timed = [c["server"] for c in every if isinstance(c.get("server"), dict)]
    prompt = [s["prompt_tokens"] for s in timed]
    cached = sum(s["cached_tokens"] for s in timed) / max(1, sum(prompt))
    print(f"\n== {name}: {len(turns)} AI turns, {len(model_turns)} played by the model, "
          f"{sum(t.skipped for t in turns)} decisions not sent (benched, too slow or the server busy)")
    if rates:
        print(f"server speeds measured in this run: prompt {rates[0]:.0f} tokens/s, generation {rates[1]:.1f} tokens/s")
    print("| turn | by | wall s | one-call limit s | ratio | calls | prompt tokens/call | reused from cache |")
    print("|---|---|---|---|---|---|---|---|")
    for i, t in enumerate(turns, 1):
        limit = one_call_limit(t, rates) if rates and t.calls else None
        tokens = [c["server"]["prompt_tokens"] for c in t.calls if isinstance(c.get("server"), dict)]
        reused = [c["server"]["cached_tokens"] for c in t.calls if isinstance(c.get("server"), dict)]
        print(f"| {i} | {t.source or '?'} | {t.wall_s:.1f} | {'-' if limit is None else f'{limit:.1f}'} "
              f"| {'-' if not limit or not t.by_model else f'{t.wall_s / limit:.2f}'} | {len(t.calls)} "
              f"| {'-' if not tokens else f'{statistics.mean(tokens):.0f}'} "
              f"| {'-' if not tokens else f'{100 * sum(reused) / max(1, sum(tokens)):.0f} %'} |")
    summary = {
        "turns": len(turns), "by_model": len(model_turns),
        "wall_p50": statistics.median(t.wall_s for t in model_turns) if model_turns else float("nan"),
        "ratio_p50": statistics.median(ratios) if ratios else float("nan"),
        "ratio_max": max(ratios) if ratios else float("nan"),
        "calls_per_turn": statistics.mean(len(t.calls) for t in model_turns) if model_turns else float("nan"),
        "prompt_p50": statistics.median(prompt) if prompt else float("nan"),
        "reused": cached,
        "longest_fallback_turn": max((t.wall_s for t in turns if not t.by_model), default=0.0),
    }
    print(f"summary {name}: model turns' wall p50 {summary['wall_p50']:.1f} s; ratio to the one-call limit "
          f"p50 {summary['ratio_p50']:.2f}, max {summary['ratio_max']:.2f}; calls per turn "
          f"{summary['calls_per_turn']:.2f}; prompt tokens per call p50 {summary['prompt_p50']:.0f}; reused from "
          f"cache {100 * summary['reused']:.0f} %; longest turn the model did not play "
          f"{summary['longest_fallback_turn']:.1f} s")
    return summary


def direct_call(base_url: str, records: list[dict[str, Any]], server: LocalModelServer) -> None:
    """One call of the first decision's prompt straight to the server, the cache made cold first: its
    wall time beside what the server's own log says it cost."""
    import json
    import urllib.request

    def post(body: dict[str, Any]) -> None:
        request = urllib.request.Request(f"{base_url}/chat/completions", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=600) as response:
            response.read()

    system = next((r["text"] for r in records if r.get("kind") == "system_prompt"), "")
    first = next((r for r in records if r.get("kind") == "llm" and r.get("purpose") == "play"
                  and isinstance(r.get("server"), dict)), None)
    if first is None:
        return
    user = "\n".join(m["text"] for m in first["messages"] if m["role"] == "user")
    made = first["server"]["generated_tokens"]
    post({"model": MODEL_ALIAS, "max_tokens": 1, "messages": [{"role": "user", "content": "cold " * 50}]})
    started = time.monotonic()  # the cache now holds another prompt: nothing of this one
    post({"model": MODEL_ALIAS, "max_tokens": made, "temperature": 0.2,
          "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]})
    wall = time.monotonic() - started
    assert server.log_path is not None
    logged = parse_log(server.log_path.read_text(encoding="utf-8", errors="replace"))
    last = logged[-1] if logged else None
    said = "" if last is None else (f"; the server: {last.prompt_tokens} prompt tokens in "
                                    f"{last.prompt_ms / 1000:.1f} s, {last.generated_tokens} generated in "
                                    f"{last.generate_ms / 1000:.1f} s")
    print(f"one direct call of the first decision's prompt (cold cache, {made} tokens asked): {wall:.1f} s wall{said}")


async def simulate(args: argparse.Namespace) -> None:
    server = LocalModelServer(threads=args.threads, batch_threads=args.batch_threads).start()
    print(f"llama-cpp-python serving {MODEL_ALIAS} at {server.base_url} (log {server.log_path})", flush=True)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(args.keep or tmp)
            await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
            config = runs.localised("tangram", server.base_url, MODEL_ALIAS, folder, local=True,
                                    server_status=server.status_path)
            run = await runs.tangram(config, args.games, args.turns, args.seed, folder)
            report("simulator", run.records)
            await asyncio.to_thread(direct_call, server.base_url, run.records, server)
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.llm_real.bench_local_turns", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=None, help="generating threads (default: local_model's)")
    parser.add_argument("--batch-threads", type=int, default=None, help="prompt-reading threads")
    parser.add_argument("--keep", default=None, help="keep the simulator's transcripts here")
    parser.add_argument("--transcripts", default=None,
                        help="report a finished run's transcripts (e.g. the real game's) instead of simulating")
    parser.add_argument("--log-level", default="ERROR")
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level, format="%(levelname)s %(name)s: %(message)s")
    if args.transcripts:
        report(args.transcripts, runs.read_records(Path(args.transcripts)))
        return 0
    try:
        asyncio.run(simulate(args))
    except LocalModelError as exc:
        raise SystemExit(f"error: {exc}") from None
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
