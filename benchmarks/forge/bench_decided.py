"""The chaos case played long enough to mean something: whole games and decided positions against a
chaotic model (or the local real one), every answer judged as Forge reads it (issue 51).

    .venv/bin/python -m benchmarks.forge.bench_decided [--games 24] [--repeats 3] [--turns 12]
        [--deadline 8] [--parallel 8] [--seed 0] [--version early|later] [--local-model]

The agent runs as its own process with the LLM player configured as configs/forge-gpt4o.yaml is
(structured output, two attempts, ``llm.guard: decided``, the decision deadline, 8 s by default).
The model is the fake OpenAI server with the chaotic responder (``fake/llm.py``: stalls past the
deadline, HTTP 500, 400 and 429, prose, truncated and broken JSON, wrong shapes, out-of-range
and duplicate picks, random schema instances, sometimes a sensible answer), or with
``--local-model`` llama-cpp-python serving Gemma 3 270M on this machine (configs/forge-local.yaml).

The fake Forge plays ``--games`` whole games (both dialects, three deck pairings, ``--parallel``
at once) and sends the decided positions of ``fake/decided.py`` ``--repeats`` times per dialect.
Every request is classified by :func:`~agent.games.forge.fake.decided.decided` (lethal burn,
lethal target, lethal attack, survival block: the guard's definitions, computed from the request
alone, wherever the request came from), and each answer is read as Forge reads it. Printed: the
decisions, the decided positions and how many were thrown away (each listed), the invalid answers,
the slowest answer against the deadline, who decided and the guard's overrides (by rule and by the
source they replaced). Goal: 0 thrown away, 0 invalid, the slowest answer within the deadline plus
a little.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from agent.core.resources import find_shipped_config
from agent.core.testing.fake_openai import FakeOpenAI
from agent.games.forge.fake.client import Exchange, FakeForge, Report
from agent.games.forge.fake.decided import decided, kept, positions
from agent.games.forge.fake.engine import Game
from agent.games.forge.fake.llm import CHAOS, chaotic
from benchmarks.forge.agent_process import deciders, forge_agent, percentile

DECKS = [("red-green", "white-blue"), ("black-red", "red-green"), ("white-blue", "black-red")]


def agent_config(base_url: str, args: argparse.Namespace) -> dict[str, Any]:
    """The shipped config the run stands for, pointed at ``base_url``."""
    shipped = find_shipped_config("forge-local" if args.local_model else "forge-gpt4o")
    assert shipped is not None
    data: dict[str, Any] = yaml.safe_load(shipped.read_text(encoding="utf-8"))
    data["llm"].update(base_url=base_url, api_key_required=False)
    data["llm"].pop("api_key_env", None)
    data["decision"]["deadline"] = args.deadline
    data["llm"]["request_timeout"] = args.deadline
    data["prompts_dir"] = str(shipped.parent.parent / "prompts" / "forge")
    for key in ("server", "transcripts"):
        data.pop(key, None)
    return data


async def play(url: str, args: argparse.Namespace) -> Report:
    report = Report()
    limit = asyncio.Semaphore(args.parallel)
    async with FakeForge(url, args.version) as forge:

        async def one_game(i: int) -> None:
            dialect = ("action", "possible_actions")[i % 2]
            game = Game(args.seed * 1000 + i, dialect, *DECKS[(i // 2) % 3], max_turns=args.turns)
            async with limit:
                await forge.play(game, report)

        async def decided_positions(dialect: str, repeat: int) -> None:
            async with limit:
                for name, body in positions(dialect):
                    game = f"decided-{dialect}-{repeat}-{name}"
                    report.exchanges.append(await forge.send({**body, "gameId": game}))
                    report.exchanges.append(await forge.send({"gameId": game, "requestType": "reflect",
                                                              "context": {"result": "bench"}}))

        await asyncio.gather(*(one_game(i) for i in range(args.games)),
                             *(decided_positions(d, r) for r in range(args.repeats)
                               for d in ("action", "possible_actions")))
    return report


def judge(report: Report) -> tuple[Counter[str], list[tuple[str, Exchange]]]:
    """Decided positions by kind, and the ones thrown away (or answered invalidly)."""
    kinds: Counter[str] = Counter()
    thrown: list[tuple[str, Exchange]] = []
    for e in report.decisions:
        kind = decided(e.request)
        if kind is None:
            continue
        kinds[kind] += 1
        if not (e.verdict.valid and kept(e.request, e.verdict.decision)):
            thrown.append((kind, e))
    return kinds, thrown


def replaced_sources(transcripts: Path) -> Counter[str]:
    out: Counter[str] = Counter()
    for path in transcripts.glob("*.jsonl"):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record["kind"] == "guard":
                out[str(record.get("replaced_source", "?"))] += 1
    return out


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=24, help="whole games (alternating dialects)")
    parser.add_argument("--repeats", type=int, default=3, help="rounds of the decided positions per dialect")
    parser.add_argument("--turns", type=int, default=12, help="turn cap per game")
    parser.add_argument("--deadline", type=float, default=8.0, help="decision.deadline (configs/forge-gpt4o.yaml: 8)")
    parser.add_argument("--parallel", type=int, default=8, help="games played at once")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--version", choices=["early", "later"], default="early")
    parser.add_argument("--local-model", action="store_true",
                        help="llama-cpp-python with Gemma 3 270M on this machine instead of the chaotic fake")
    args = parser.parse_args()

    server: Any = None
    fake: FakeOpenAI | None = None
    if args.local_model:
        from agent.core.local_model import LocalModelServer

        server = await asyncio.to_thread(LocalModelServer().start)
        base_url, model = server.base_url, "local Gemma 3 270M (llama-cpp-python)"
    else:
        fake = await FakeOpenAI(responder=chaotic(args.seed, stall_s=args.deadline + 2)).start()
        base_url, model = fake.base_url, f"chaotic fake ({len(CHAOS)} behaviours)"
    try:
        async with forge_agent(agent_config(base_url, args)) as (url, transcripts, _):
            report = await play(url, args)
            await asyncio.sleep(0.5)
            sources, rules = deciders(transcripts)
            replaced = replaced_sources(transcripts)
        calls = len(fake.chat_requests) if fake is not None else None
    finally:
        if fake is not None:
            await fake.stop()
        if server is not None:
            await asyncio.to_thread(server.stop)

    decisions = report.decisions
    kinds, thrown = judge(report)
    invalid = report.invalid()
    latencies = [e.latency_s for e in decisions]
    slowest = max(decisions, key=lambda e: e.latency_s)
    print(f"Forge, {model}, deadline {args.deadline:g} s, {args.version} client: {len(decisions)} decisions "
          f"({dict(Counter(e.kind for e in decisions))})" + (f"; LLM calls {calls}" if calls is not None else ""))
    print(f"decided positions: {sum(kinds.values())} ({dict(kinds)}); thrown away: {len(thrown)}")
    for kind, e in thrown[:10]:
        print(f"  THROWN AWAY {kind}: game {e.request.get('gameId')}: {e.verdict.outcome} {e.verdict.decision} "
              f"{e.verdict.reason}")
    print(f"invalid answers (as Forge reads them): {len(invalid)} of {len(decisions)}")
    for e in invalid[:5]:
        print(f"  INVALID {e.kind}: {e.verdict.reason}: {e.body[:160]!r}")
    print(f"slowest answer: {slowest.latency_s:.2f} s ({slowest.kind}) against the {args.deadline:g} s deadline; "
          f"p50 {percentile(latencies, 0.5) * 1000:.0f} ms, p99 {percentile(latencies, 0.99) * 1000:.0f} ms")
    print(f"who decided: {dict(sources)}")
    print(f"guard overrides: {sum(rules.values())} {dict(rules)}; answers they replaced: {dict(replaced)}")
    print(f"games (turn cap {args.turns}): {dict(Counter(report.results))}")


if __name__ == "__main__":
    asyncio.run(main())
