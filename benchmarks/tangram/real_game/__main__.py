"""``python -m benchmarks.tangram.real_game``: see the package's docstring."""

from __future__ import annotations

import asyncio
import json
import sys

from benchmarks.tangram.real_game.agent_run import RunnerError
from benchmarks.tangram.real_game.args import ArgumentError, build_parser, options_from
from benchmarks.tangram.real_game.runner import run


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        options = options_from(args)
    except ArgumentError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        lines, summary = asyncio.run(run(options))
    except RunnerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print("\n".join(lines), flush=True)
    if args.json:
        print(json.dumps(summary, separators=(",", ":")), flush=True)
    if "chat_set" in summary:  # a reply set: every item got its reply
        return 0 if summary["chat_set"]["replies"] == summary["chat_set"]["items"] else 1
    return 0 if summary["turns"] and summary["finished"] + summary["interrupted"] == summary["turns"] else 1


if __name__ == "__main__":
    sys.exit(main())
