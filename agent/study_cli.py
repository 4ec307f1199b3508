"""``python -m agent study next|pause|resume|drop ID --study FILE`` and ``study status --study FILE
[--json]``: the experimenter's hands on a study's participants, from the command line.

It writes the study's database directly (SQLite in WAL mode), so it works while the agent serves
the study: the next game connection belongs to the participant started here. It checks the study
file and its conditions' configs as the agent does, but needs no API key.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from agent.core.config import ConfigError
from agent.core.studies.report import format_status, participant_line
from agent.core.studies.run import StudyRun
from agent.core.studies.store import StoreError
from agent.games import read_study

ACTIONS = ("next", "pause", "resume", "drop")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m agent study",
        description="Start, pause, resume or drop a study's participants, and show the design's balance. "
                    "Works while the agent serves the study (python -m agent --study FILE).")
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    helps = {"next": "start participant ID: the plan assigns their order of conditions; the next game "
                     "connection plays their first condition",
             "pause": "pause participant ID (games are not bound to them until resumed)",
             "resume": "resume paused participant ID (nobody else may be active)",
             "drop": "mark participant ID dropped out; their order sequence goes to the next participant started"}
    for action in ACTIONS:
        command = sub.add_parser(action, help=helps[action], description=helps[action])
        command.add_argument("participant", metavar="ID", help="participant id, e.g. P07")
        command.add_argument("--study", type=Path, required=True, metavar="FILE", help="the study file")
    status = sub.add_parser("status", help="participants per order sequence and per condition, completed, dropped",
                            description="The design's balance: participants per order sequence and per condition, "
                                        "completed and dropped out, and each participant's order and progress.")
    status.add_argument("--study", type=Path, required=True, metavar="FILE", help="the study file")
    status.add_argument("--json", action="store_true", help="one JSON object instead of tables")
    return parser


async def _run(args: argparse.Namespace) -> str:
    study = read_study(args.study)
    async with await StudyRun.open(study) as run:
        if args.action == "status":
            status = await run.status()
            return status.model_dump_json(indent=2) if args.json else format_status(status)
        changed = await {"next": run.next_participant, "pause": run.pause, "resume": run.resume,
                         "drop": run.drop}[args.action](args.participant)
        return participant_line(changed)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        print(asyncio.run(_run(args)))
    except (ConfigError, StoreError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
