"""Win rates of our agent against the 2022 competition's agents, on the real Hive Arena.

    benchmarks/hive/build_2022.sh ARENA_SRC ERIKPEIK_SRC KONA3B_SRC /tmp/hive2022   # once
    python -m benchmarks.hive.bench_2022 --built /tmp/hive2022 [--matches 24] [--jobs 2] [--seed 6000]
        [--opponents epk_final,epk_d4,...] [--logs DIR] [--a ours]

Each block is the evaluation command's own summary (wins / draws / losses, the matches played out
apart from forfeits, scores, forfeits on each side, decision-time percentiles). Goal (issue 21):
>= 75 % of the matches played out against each finalist, 0 forfeits of ours, decision p99 <= 20 ms,
and >= 95 % against the example agent. ``--a`` plays another player of the evaluation instead of
ours (a counter-bot, to measure a candidate strategy on the real arena). Nothing of theirs is in
this repository: build_2022.sh builds their public sources in a temporary folder.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agent.games.hive import eval as hive_eval

FINALISTS = ("epk_final", "epk_d4", "spy_smart", "thinkemoji_d4", "tribe13-agent", "tribe13", "dumbledores",
             "DeepBlueC_d4", "builders_smart_unstuck_limited")
CONTROLS = ("waxers", "example-agent")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.hive.bench_2022", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--built", type=Path, required=True, help="OUT folder of build_2022.sh")
    p.add_argument("-n", "--matches", type=int, default=24)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--seed", type=int, default=6000)
    p.add_argument("--opponents", default=",".join(FINALISTS + CONTROLS))
    p.add_argument("--logs", type=Path, help="keep every match log in DIR/<opponent>/")
    p.add_argument("--a", default="ours", help="our side (any player of the evaluation command)")
    args = p.parse_args(argv)
    arena = args.built / "arena" / "bin" / "arena"
    if not arena.is_file():
        print(f"error: no arena at {arena}; run benchmarks/hive/build_2022.sh first", file=sys.stderr)
        return 2
    status = 0
    for opponent in args.opponents.split(","):
        agent = args.built / "agents" / opponent
        if not agent.is_file():
            print(f"== {opponent}: not built ({agent} missing)", flush=True)
            status = 1
            continue
        print(f"== {args.a} vs {opponent}", flush=True)
        command = ["--a", args.a, "--b", f"cmd:{agent} {{host}} {{port}}",
                   "--arena-command", f"{arena} {{port}} {{log}}",
                   "-n", str(args.matches), "--jobs", str(args.jobs), "--seed", str(args.seed)]
        if args.logs:
            command += ["--logs", str(args.logs / opponent)]
        status |= hive_eval.main(command)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
