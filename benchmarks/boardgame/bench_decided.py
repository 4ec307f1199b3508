"""The chaos case for the Boardgame agent, long enough to mean something: the LLM player (guard on)
against the engine's strong bot with a chaotic model, every move sent audited (issue 51).

    .venv/bin/python -m benchmarks.boardgame.bench_decided [--ttt 50] [--c4 8] [--search-seconds 0.3]
        [--llm chaotic|random-schema] [--seed 1] [--local-model]

``configs/boardgame-llm.yaml`` with the fake LLM (``--llm chaotic``: half of the replies a random
legal move, the other half every misbehaviour of a model or provider: stalls, errors, prose, cut
and broken JSON, moves off the list) or the fake server's random-schema mode. Every move the agent
sends for its LLM player goes through the guarded player (the model's, a re-ask's, the offline
fallback's, the last resort's), which keeps each with its position; each is audited afresh:

- a **decided position** is one where a move wins at once, or where some move loses by force and
  another does not (tic-tac-toe: the exact solver; connect four: one ply, the opponent's win next,
  in a position a search of four times the guard's budget does not prove lost whatever we play);
- a move **throws it away** when it misses the win, or loses by force while another move did not
  (connect four also gets the search audit of benchmarks/boardgame/bench_guard.py, at the guard's
  budget and twice it).

With ``--local-model`` the model is llama-cpp-python serving Gemma 3 270M on this machine
(``configs/boardgame-local.yaml``, pointed at it) instead of the fake.

Printed per game: moves sent (the engine's count and the guard's), decided positions and those
thrown away, the engine's refusals of sent actions (invalid answers), losses, who chose the moves,
and the slowest decision against the configured time per attempt. Goal: 0 thrown away, 0 refused.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import tempfile
from pathlib import Path
from typing import Any

import yaml

from agent.core.config import PROJECT_DIR
from agent.games.boardgame import client as client_module
from agent.games.boardgame.eval import Evaluation, evaluate
from agent.games.boardgame.players.guard import OnePlyProver, SearchProver
from agent.games.boardgame.players.guarded import GuardedMove, GuardedPlayer
from agent.games.boardgame.players.perfect import Solver
from agent.games.boardgame.rules.base import GameRules
from agent.games.boardgame.rules.registry import get_rules
from benchmarks.boardgame.bench_guard import _config, _run


def _wins(rules: GameRules[Any], position: Any, move: int) -> bool:
    outcome = rules.outcome(rules.play(position, move))
    return outcome is not None and outcome.winner == rules.to_move(position)


def audit(rules: GameRules[Any], moves: list[GuardedMove], search: float) -> tuple[int, int]:
    """(decided positions, thrown away) over ``moves`` (each the move sent and its position).

    Connect four: a move "loses" when the opponent can win at once after it, and the position
    counts only when a search of four times the guard's budget finds a move it cannot prove losing
    (a position already lost by force is nobody's to throw away)."""
    if rules.name == "tictactoe":
        solver = Solver(rules)

        def loses(position: Any, move: int) -> bool:
            return solver.value(rules.play(position, move)) > 0

        def saveable(position: Any) -> bool:
            return True
    else:
        prover = OnePlyProver(rules)
        root = SearchProver(rules, 4 * search)

        def loses(position: Any, move: int) -> bool:
            return prover.loses(position, move)

        def saveable(position: Any) -> bool:
            return root.safe_move(position) is not None
    decided = thrown = 0
    for entry in moves:
        legal = list(rules.legal_moves(entry.position))
        wins = [m for m in legal if _wins(rules, entry.position, m)]
        losing = [m for m in legal if m not in wins and loses(entry.position, m)]
        if not wins and not (losing and len(losing) < len(legal) and saveable(entry.position)):
            continue
        decided += 1
        thrown += (entry.move not in wins) if wins else (entry.move in losing)
    return decided, thrown


def guarded_moves(evaluation: Evaluation) -> list[GuardedMove]:
    assert evaluation.llm is not None
    return [m for p in evaluation.llm.players if isinstance(p, GuardedPlayer) for m in p.moves]


def report(game: str, evaluation: Evaluation, refused: int, seconds: float, search: float) -> list[str]:
    rules = get_rules(game)
    tally = evaluation.a
    sent = sum(len(r.decisions) for r in tally.results)
    moves = guarded_moves(evaluation)
    decided, thrown = audit(rules, moves, search)
    outcomes = [r.outcome for r in tally.results]
    slowest = max((d.seconds for r in tally.results for d in r.decisions), default=0.0)
    by_source: dict[str, int] = {}
    for m in moves:
        key = f"{m.source}{'+guard' if m.override else ''}"
        by_source[key] = by_source.get(key, 0) + 1
    lines = [evaluation.header,
             f"{game}: moves sent {sent} (through the guard: {len(moves)}); decided positions {decided}, "
             f"thrown away {thrown}; actions the engine refused (invalid answers): {refused}; "
             f"losses {outcomes.count('loss')} of {len(outcomes)}, unfinished "
             f"{sum(o not in ('win', 'draw', 'loss') for o in outcomes)}",
             f"{game}: who chose the moves sent: {by_source}; slowest decision {slowest:.2f} s "
             f"(the config allows {seconds:g} s per attempt)"]
    if game == "connect_four":
        audit_search = SearchProver(rules, 2 * search)
        root = SearchProver(rules, 8 * search)
        deep = sum(1 for m in moves if audit_search.loses(m.position, m.move)
                   and (safe := root.safe_move(m.position)) is not None and safe != m.move)
        lines.append(f"{game}: search audit ({2 * search:g} s): {deep} moves into a proven loss while a "
                     "non-losing move existed")
    return lines


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ttt", type=int, default=50, help="tic-tac-toe matches")
    parser.add_argument("--c4", type=int, default=8, help="connect-four matches")
    parser.add_argument("--search-seconds", type=float, default=0.3, help="the guard's search budget")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--llm", choices=["chaotic", "random-schema"], default="chaotic")
    parser.add_argument("--local-model", action="store_true",
                        help="llama-cpp-python with Gemma 3 270M on this machine instead of the fake")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")

    refused = [0]
    perform = client_module.MatchClient._perform

    async def counting(self: Any, action: Any) -> Any:
        answer, data = await perform(self, action)
        refused[0] += answer is not None
        return answer, data

    client_module.MatchClient._perform = counting  # type: ignore[method-assign]
    server: Any = None
    if args.local_model:
        from agent.core.local_model import LocalModelServer

        server = await asyncio.to_thread(LocalModelServer().start)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            config = _config(Path(tmp), args.search_seconds) if server is None else \
                _local_config(Path(tmp), args.search_seconds, server.base_url)
            seconds = 60.0
            for game, matches in (("tictactoe", args.ttt), ("connect_four", args.c4)):
                if not matches:
                    continue
                refused[0] = 0
                if server is None:
                    evaluation = await _run(game, matches, "decided", config, args.seed, args.llm)
                else:
                    evaluation = await evaluate(argparse.Namespace(
                        game=game, a="llm", b="strong", matches=matches, first="alternate", search_seconds=0.3,
                        seed=args.seed, config=config, fake_llm=None, guard="decided"))
                for line in report(game, evaluation, refused[0], seconds, args.search_seconds):
                    print(line)
    finally:
        if server is not None:
            await asyncio.to_thread(server.stop)


def _local_config(folder: Path, search_seconds: float, base_url: str) -> Path:
    """configs/boardgame-local.yaml pointed at the local server, with the guard's search budget."""
    data = yaml.safe_load((PROJECT_DIR / "configs" / "boardgame-local.yaml").read_text(encoding="utf-8"))
    data["llm"]["base_url"] = base_url
    data["play"] = {**data.get("play", {}), "search_seconds": search_seconds}
    data["prompts_dir"] = str(PROJECT_DIR / "prompts" / "boardgame")
    path = folder / "boardgame-local-bench.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


if __name__ == "__main__":
    asyncio.run(main())
