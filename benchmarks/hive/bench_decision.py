"""Decision time of the offline strategy (goal: p99 <= 20 ms), over seeded matches without sockets.

    python -m benchmarks.hive.bench_decision [--matches 20] [--opponent example]

Times only the strategy's decide() (world update, path fields, tactics), measured in-process with
the rules engine feeding views, so nothing else competes for the time.
"""

from __future__ import annotations

import argparse
import statistics

from agent.games.hive.opponents.bots import BOTS, make_bot
from agent.games.hive.opponents.sim import play


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.hive.bench_decision")
    p.add_argument("--matches", type=int, default=20)
    p.add_argument("--opponent", choices=sorted(BOTS), default="example")
    p.add_argument("--seed", type=int, default=1000)
    args = p.parse_args(argv)
    times: list[float] = []
    turns = []
    for i in range(args.matches):
        seed = args.seed + i
        result = play((make_bot("ours", seed), make_bot(args.opponent, seed + 1)), seed=seed)
        times.extend(result.decision_ms[0])
        turns.append(result.turns)
    times.sort()

    def q(x: float) -> float:
        return times[min(len(times) - 1, int(x * len(times)))]

    print(f"strategy decisions vs {args.opponent}: {len(times)} over {args.matches} matches "
          f"(mean {statistics.mean(turns):.0f} turns per match)")
    print(f"decision ms: mean {statistics.mean(times):.2f}  p50 {q(0.5):.2f}  p90 {q(0.9):.2f}  "
          f"p99 {q(0.99):.2f}  p99.9 {q(0.999):.2f}  max {times[-1]:.2f}")
    print(f"goal p99 <= 20 ms: {'met' if q(0.99) <= 20 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
