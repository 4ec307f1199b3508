"""Win rates of our agent over TCP against every bot, through the evaluation command.

    python -m benchmarks.hive.bench_winrate [--matches 20] [--jobs 2] [--opponents random,mover,example,forager,ours]

Each line block is the evaluation command's own summary (win rate, scores, decision-time
percentiles, forfeits). Goal: 0 forfeits and >= 95 % wins against random and example.
"""

from __future__ import annotations

import argparse

from agent.games.hive import eval as hive_eval


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.hive.bench_winrate")
    p.add_argument("--matches", type=int, default=20)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--opponents", default="random,mover,example,forager,ours")
    args = p.parse_args(argv)
    status = 0
    for opponent in args.opponents.split(","):
        print(f"== ours vs {opponent}", flush=True)
        status |= hive_eval.main(["--a", "ours", "--b", opponent, "-n", str(args.matches), "--jobs", str(args.jobs)])
    return status


if __name__ == "__main__":
    raise SystemExit(main())
