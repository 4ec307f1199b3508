"""The LLM player against the engine's strong bot with a chaotic fake LLM: losses, who chose the
moves (the model, the guard, the offline fallback) and decided positions thrown away.

    .venv/bin/python -m benchmarks.boardgame.bench_guard [--ttt 20] [--c4 6] [--search-seconds 0.3]
        [--llm chaotic|random-schema]

The config is ``configs/boardgame-llm.yaml`` with the fake LLM (``--fake-llm chaotic``: half of the
replies a random legal move, the other half every misbehaviour of a model or provider) and
``play.search_seconds`` set to ``--search-seconds`` (the guard's search budget). Each game is played
with ``llm.guard: decided`` and with ``off``. For connect four every move the model chose is then
audited with a fresh search of the guard's budget and of twice it (with the guard on: the guarded
player keeps the positions): a move it proves losing while a search of four times the budget from
the position before it does not prove every move losing is a decided position thrown away.
Goals: no tic-tac-toe loss and most moves the model's; no connect-four position thrown away with
the guard on.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import tempfile
from pathlib import Path

import yaml

from agent.core.config import PROJECT_DIR
from agent.games.boardgame.eval import Evaluation, evaluate
from agent.games.boardgame.players.guard import SearchProver
from agent.games.boardgame.players.guarded import GuardedPlayer
from agent.games.boardgame.rules.registry import get_rules


def _config(folder: Path, search_seconds: float) -> Path:
    data = yaml.safe_load((PROJECT_DIR / "configs" / "boardgame-llm.yaml").read_text(encoding="utf-8"))
    data["play"] = {**data.get("play", {}), "search_seconds": search_seconds}
    data["prompts_dir"] = str(PROJECT_DIR / "prompts" / "boardgame")
    path = folder / "boardgame-llm-fake.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


async def _run(game: str, matches: int, guard: str, config: Path, seed: int, fake_llm: str) -> Evaluation:
    args = argparse.Namespace(game=game, a="llm", b="strong", matches=matches, first="alternate",
                              search_seconds=0.3, seed=seed, config=config, fake_llm=fake_llm, guard=guard)
    return await evaluate(args)


def thrown_away(evaluation: Evaluation, seconds: float) -> tuple[int, int]:
    """(moves audited, moves into a loss proven in ``seconds`` while the position was not lost).

    "Not lost" is the root search's verdict with four times the budget: searches stop on time, so
    a shallower root search can miss a loss the guard's own search had proven (the guard then
    rightly keeps the model's move, every move losing)."""
    rules = get_rules("connect_four")
    audit = SearchProver(rules, seconds)
    root = SearchProver(rules, 4 * seconds)
    audited = bad = 0
    assert evaluation.llm is not None
    for player in evaluation.llm.players:
        if not isinstance(player, GuardedPlayer):
            continue
        for entry in player.moves:
            audited += 1
            if audit.loses(entry.position, entry.move):
                safe = root.safe_move(entry.position)
                bad += safe is not None and safe != entry.move
    return audited, bad


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ttt", type=int, default=20, help="tic-tac-toe matches per guard setting")
    parser.add_argument("--c4", type=int, default=6, help="connect-four matches per guard setting")
    parser.add_argument("--search-seconds", type=float, default=0.3, help="the guard's search budget")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--llm", choices=["chaotic", "random-schema"], default="chaotic",
                        help="the fake LLM: chaotic, or the fake server's random-schema mode (random legal moves)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    with tempfile.TemporaryDirectory() as tmp:
        config = _config(Path(tmp), args.search_seconds)
        for guard in ("decided", "off"):
            if args.ttt:
                for line in (await _run("tictactoe", args.ttt, guard, config, args.seed, args.llm)).lines():
                    print(line)
            if args.c4:
                evaluation = await _run("connect_four", args.c4, guard, config, args.seed, args.llm)
                for line in evaluation.lines():
                    print(line)
                if guard == "off":
                    continue  # no guarded player keeps the positions of the raw model's moves
                for factor in (1, 2):
                    audited, bad = thrown_away(evaluation, factor * args.search_seconds)
                    print(f"connect_four audit (search {factor * args.search_seconds:g} s): {audited} moves the "
                          f"model or the guard chose, {bad} into a proven loss while a non-losing move existed")


if __name__ == "__main__":
    asyncio.run(main())
