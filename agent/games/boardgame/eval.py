"""Play N matches between two players through a real engine and print what happened.

``python -m agent.games.boardgame.eval --game connect_four --a best --b strong --matches 100``

Player A is always an agent (our client over WebSocket). Player B is the engine's own bot when it
is ``random`` or ``strong`` (so "against the engine's strong bot" means exactly that), else a
second agent that joins the match. Both move through the protocol, so illegal actions, retries
and decision times are measured where they happen. An LLM player needs ``--config`` (the agent's
YAML with an ``llm`` section); ``--fake-llm chaotic`` plays it against a local fake LLM instead.
For an LLM player a last line says who chose its moves: the model, the guard (``llm.guard``, or
``--guard`` to override the config) or the offline fallback.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.games.boardgame.client import ClientError, ClientSettings, MatchClient, MatchResult
from agent.games.boardgame.engine.server import Engine, EngineSettings
from agent.games.boardgame.players.base import MovePlayer, Player
from agent.games.boardgame.players.guarded import GuardedPlayer
from agent.games.boardgame.players.offline import make_offline
from agent.games.boardgame.rules.base import GameRules
from agent.games.boardgame.rules.registry import GAMES

PLAYERS = ("best", "random", "strong", "llm")
ENGINE_BOTS = ("random", "strong")


@dataclass
class Tally:
    name: str
    results: list[MatchResult] = field(default_factory=list)

    def add(self, result: MatchResult) -> None:
        self.results.append(result)

    def summary(self) -> str:
        outcomes = Counter(r.outcome for r in self.results)
        n = len(self.results) or 1
        attempts = sum(r.attempts for r in self.results)
        illegal = sum(r.illegal for r in self.results)
        times = sorted(d.seconds for r in self.results for d in r.decisions)
        protocol = sum(r.protocol_errors for r in self.results)
        fallbacks = sum(r.fallbacks for r in self.results)
        other = sum(v for k, v in outcomes.items() if k not in ("win", "draw", "loss"))
        line = (f"{self.name}: {outcomes['win']} wins, {outcomes['draw']} draws, {outcomes['loss']} losses"
                f"{f', {other} unfinished' if other else ''} of {len(self.results)} "
                f"({100 * outcomes['win'] / n:.1f} % wins, {100 * outcomes['loss'] / n:.1f} % losses); "
                f"illegal actions {illegal} of {attempts} ({100 * illegal / max(1, attempts):.2f} %); "
                f"offline fallbacks {fallbacks}; protocol errors {protocol}")
        if times:
            p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
            line += (f"; decision time mean {statistics.fmean(times):.3f} s, median {statistics.median(times):.3f} s, "
                     f"p95 {p95:.3f} s, max {times[-1]:.3f} s over {len(times)} decisions")
        return line


def _factory(kind: str, seconds: float, rng: random.Random,
             llm: Callable[[GameRules[Any]], Player] | None) -> Callable[[GameRules[Any]], Player]:
    def make(rules: GameRules[Any]) -> Player:
        if kind == "llm":
            assert llm is not None
            return llm(rules)
        return make_offline(kind, rules, random.Random(rng.random()), seconds=seconds)
    return make


async def play_match(url: str, game: str, a: str, b: str, a_first: bool, *, seconds: float, rng: random.Random,
                     llm: Callable[[GameRules[Any]], Player] | None = None, max_attempts: int = 3,
                     decision_seconds: float = 60.0) -> tuple[MatchResult, MatchResult | None]:
    """One match; A's result and, when B is an agent, B's."""
    def fallback(rules: GameRules[Any]) -> MovePlayer:
        return make_offline("best", rules, random.Random(rng.random()), seconds=seconds)

    b_is_bot = b in ENGINE_BOTS
    created: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def on_event(kind: str, data: dict[str, Any]) -> None:
        if kind == "match_created" and not created.done():
            created.set_result(str(data["match_id"]))

    common = {"max_attempts": max_attempts, "decision_seconds": decision_seconds, "poll_seconds": 2.0}
    settings_a = ClientSettings(url=url, agent_id="A", game=game,
                                create_settings={"bot": b if b_is_bot else "none", "seat": 1 if a_first else 2},
                                **common)  # type: ignore[arg-type]
    client_a = MatchClient(settings_a, _factory(a, seconds, rng, llm), fallback, on_event)
    task_a = asyncio.create_task(client_a.play())
    if b_is_bot:
        return await task_a, None
    waiters: set[asyncio.Future[Any]] = {task_a, created}
    done, _ = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    if task_a in done:  # A failed before creating
        return task_a.result(), None
    settings_b = ClientSettings(url=url, agent_id="B", game=game, match_id=created.result(),
                                **common)  # type: ignore[arg-type]
    client_b = MatchClient(settings_b, _factory(b, seconds, rng, llm), fallback)
    result_a, result_b = await asyncio.gather(task_a, client_b.play())
    return result_a, result_b


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m agent.games.boardgame.eval", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", choices=GAMES, default="tictactoe")
    parser.add_argument("--a", choices=PLAYERS, default="best", help="player A, an agent (default best)")
    parser.add_argument("--b", choices=PLAYERS, default="strong",
                        help="player B: random/strong are the engine's bots, best/llm a second agent (default strong)")
    parser.add_argument("--matches", type=int, default=20)
    parser.add_argument("--first", choices=("a", "b", "alternate"), default="a", help="who moves first (default a)")
    parser.add_argument("--search-seconds", type=float, default=0.3,
                        help="connect-four search time per move of our player (default 0.3)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--config", type=Path, help="agent YAML config with the llm section, for --a/--b llm")
    parser.add_argument("--fake-llm", choices=("chaotic", "legal", "random-schema"),
                        help="play the LLM player against a local fake LLM (no key, no network)")
    parser.add_argument("--guard", choices=("decided", "off"), help="an llm player's llm.guard (default: the config's)")
    parser.add_argument("--log-level", default="ERROR", choices=("DEBUG", "INFO", "WARNING", "ERROR"))
    args = parser.parse_args(argv)
    if args.matches < 1 or args.matches > 10_000:
        parser.error("--matches must be from 1 to 10000")
    if args.search_seconds <= 0:
        parser.error("--search-seconds must be positive")
    if "llm" in (args.a, args.b) and args.config is None and args.fake_llm is None:
        parser.error("an llm player needs --config (with an llm section) or --fake-llm")
    return args


@dataclass
class LLMUse:
    """Who chose the LLM player's moves, over every match of an evaluation."""

    guard: str
    players: list[Player] = field(default_factory=list)
    """The players made (guarded ones keep their overrides)."""

    def overrides(self) -> Counter[str]:
        return Counter(o.rule for p in self.players if isinstance(p, GuardedPlayer) for o in p.overrides)

    def line(self, tally: Tally) -> str:
        moves = sum(len(r.decisions) for r in tally.results)
        fallbacks = sum(r.fallbacks for r in tally.results)
        rules = self.overrides()
        guarded = sum(rules.values())
        of_fallbacks = sum(p.fallback_overrides for p in self.players if isinstance(p, GuardedPlayer))
        model = moves - fallbacks - (guarded - of_fallbacks)
        share = 100 / max(1, moves)
        detail = ", ".join(f"{rule} {n}" for rule, n in sorted(rules.items()))
        return (f"{tally.name} moves: {moves}; the model's {model} ({model * share:.1f} %), guard overrides "
                f"{guarded} ({guarded * share:.1f} %{f': {detail}' if detail else ''}), offline fallbacks "
                f"{fallbacks} ({fallbacks * share:.1f} %, {of_fallbacks} of them replaced by the guard); "
                f"llm.guard {self.guard}")


@dataclass
class Evaluation:
    header: str
    a: Tally
    b: Tally
    llm: LLMUse | None = None

    def lines(self) -> list[str]:
        out = [self.header, self.a.summary(), *([self.b.summary()] if self.b.results else [])]
        if self.llm is not None:
            out += [self.llm.line(t) for t, kind in ((self.a, self.a.name), (self.b, self.b.name))
                    if t.results and kind.split("=", 1)[1].startswith("llm")]
        return out


async def evaluate(args: argparse.Namespace) -> Evaluation:
    """Play ``args.matches`` matches on a private engine; ClientError if a match cannot be played."""
    rng = random.Random(args.seed)
    engine = Engine(EngineSettings(games=(args.game,), bot="none", seed=args.seed, turn_timeout=600.0))
    port = await engine.start("127.0.0.1", 0)
    url = f"ws://127.0.0.1:{port}"
    cleanup: list[Callable[[], Any]] = []
    llm_factory = None
    use: LLMUse | None = None
    limits: dict[str, Any] = {"max_attempts": 3, "decision_seconds": 60.0}
    try:
        if "llm" in (args.a, args.b):
            llm_factory, limits, use = await _llm_factory(args, cleanup)
        tally_a = Tally(f"A={args.a}")
        tally_b = Tally(f"B={args.b}{' (engine bot)' if args.b in ENGINE_BOTS else ''}")
        a_first_count = 0
        started = time.monotonic()
        for index in range(args.matches):
            a_first = args.first == "a" or (args.first == "alternate" and index % 2 == 0)
            a_first_count += a_first
            result_a, result_b = await play_match(url, args.game, args.a, args.b, a_first,
                                                  seconds=args.search_seconds, rng=rng, llm=llm_factory, **limits)
            tally_a.add(result_a)
            if result_b is not None:
                tally_b.add(result_b)
        elapsed = time.monotonic() - started
        header = (f"{args.game}: A={args.a} vs B={args.b}, {args.matches} matches (A moved first in {a_first_count}), "
                  f"search {args.search_seconds:g} s/move, seed {args.seed}, {elapsed:.1f} s")
        return Evaluation(header, tally_a, tally_b, use)
    finally:
        for close in reversed(cleanup):
            result = close()
            if asyncio.iscoroutine(result):
                await result
        await engine.close()


async def run(args: argparse.Namespace) -> int:
    try:
        evaluation = await evaluate(args)
    except ClientError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for line in evaluation.lines():
        print(line)
    return 0


async def _llm_factory(args: argparse.Namespace, cleanup: list[Callable[[], Any]]
                       ) -> tuple[Callable[[GameRules[Any]], Player], dict[str, Any], LLMUse]:
    """The LLM player's factory, the config's per-turn limits, and the record of who chose."""
    from agent.core.config import load_config
    from agent.core.llm import LLMClient
    from agent.games.boardgame.config import BoardgameConfig
    from agent.games.boardgame.players.llm import LLMPlayer
    from agent.games.boardgame.runner import guard_seconds
    from agent.games.boardgame.templates import load_templates

    config = load_config(args.config, BoardgameConfig)
    if args.guard is not None:
        config = config.model_copy(update={"llm": config.llm.model_copy(update={"guard": args.guard})})
    if args.fake_llm:
        from agent.core.testing.fake_openai import FakeOpenAI
        from agent.core.testing.random_schema import RandomSchemaOptions
        from agent.games.boardgame.testing import chaotic_responder, legal_responder

        if args.fake_llm == "random-schema":
            fake = FakeOpenAI(random_schema=RandomSchemaOptions(), seed=args.seed)
        else:
            fake = FakeOpenAI(responder=chaotic_responder(random.Random(args.seed)) if args.fake_llm == "chaotic"
                              else legal_responder(random.Random(args.seed)))
        await fake.start()
        cleanup.append(fake.stop)
        llm_config = config.llm.model_copy(update={"base_url": fake.base_url, "api_key_required": False,
                                                   "request_timeout": 5.0})
        config = config.model_copy(update={"llm": llm_config})
    prompts = load_templates(config)
    client = LLMClient(config.llm, config.api_key())
    cleanup.append(client.aclose)
    use = LLMUse(config.llm.guard)

    def make(rules: GameRules[Any]) -> Player:
        player: Player = LLMPlayer(client, prompts, max_calls=config.play.max_llm_calls)
        if config.llm.guard == "decided":
            player = GuardedPlayer(player, rules, guard_seconds(config))
        use.players.append(player)
        return player
    return make, {"max_attempts": config.play.max_attempts, "decision_seconds": config.play.decision_seconds}, use


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=args.log_level, format="%(levelname)s %(name)s: %(message)s")
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
