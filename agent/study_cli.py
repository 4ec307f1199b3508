"""``python -m agent study next|pause|resume|drop|withdraw ID --study FILE``, ``study status --study FILE
[--json]`` and ``study invite --study FILE --n N``: the experimenter's hands on a study's participants,
from the command line. Every subcommand takes the study file the same way, ``--study FILE``.

It writes the study's database directly (SQLite in WAL mode), so it works while the agent serves
the study: the next game connection belongs to the participant started here. It checks the study
file and its conditions' configs as the agent does, but needs no API key.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import os
import sys
from pathlib import Path

from pydantic import ValidationError

from agent.core.config import ConfigError
from agent.core.studies.lab import LAB_PAGES_PORT, lab_address, lab_link
from agent.core.studies.online import Invite, OnlineRun
from agent.core.studies.report import format_status, participant_line
from agent.core.studies.run import StudyRun
from agent.core.studies.store import StoreError
from agent.core.studies.study_file import OnlineSpec, Study
from agent.games import read_study

ACTIONS = ("next", "pause", "resume", "drop")
SUBCOMMANDS = (*ACTIONS, "status", "invite", "withdraw", "link")


def _study_file(command: argparse.ArgumentParser) -> None:
    """``--study FILE``, required: how every subcommand takes the study file."""
    command.add_argument("--study", type=Path, required=True, metavar="FILE", help="the study file")


def _pages_port(command: argparse.ArgumentParser) -> None:
    command.add_argument("--pages-port", type=int, default=LAB_PAGES_PORT, metavar="PORT",
                         help=f"the lab's pages' port, as the agent's --lab-pages (default {LAB_PAGES_PORT})")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m agent study",
        description="Start, pause, resume or drop a study's participants, show the design's balance, and make an "
                    "online study's links; every subcommand takes the study file as --study FILE. Works while the "
                    "agent serves the study (python -m agent --study FILE).")
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    helps = {"next": "start participant ID: the plan assigns their order of conditions; the next game "
                     "connection plays their first condition",
             "pause": "pause participant ID (games are not bound to them until resumed)",
             "resume": "resume paused participant ID (nobody else may be active)",
             "drop": "mark participant ID dropped out; their order sequence goes to the next participant started"}
    for action in ACTIONS:
        command = sub.add_parser(action, help=helps[action], description=helps[action])
        command.add_argument("participant", metavar="ID", help="participant id, e.g. P07")
        _study_file(command)
        if action == "next":
            _pages_port(command)
    link = sub.add_parser(
        "link", help="a new link to in-lab participant ID's pages (the old one stops working)",
        description="With questionnaires, an in-lab participant answers them on pages the agent serves on this "
                    "machine (127.0.0.1); 'study next' prints their link, and this makes a new one (the old one "
                    "stops working), e.g. when the browser window was closed and the link lost.")
    link.add_argument("participant", metavar="ID", help="participant id, e.g. P07")
    _study_file(link)
    _pages_port(link)
    status = sub.add_parser("status", help="participants per order sequence and per condition, completed, dropped",
                            description="The design's balance: participants per order sequence and per condition, "
                                        "completed and dropped out, and each participant's order and progress.")
    _study_file(status)
    status.add_argument("--json", action="store_true", help="one JSON object instead of tables")
    invite = sub.add_parser(
        "invite", help="write N participant links (online studies: docs/online-study.md)",
        description="Make N invitation links, each an unguessable code for one participant (their order of "
                    "conditions is given at their first visit). The links are printed and written to a CSV "
                    "file (readable by you only); the database keeps only hashes of the codes, so keep the file.")
    _study_file(invite)
    withdraw = sub.add_parser(
        "withdraw", help="participant ID withdrew: delete their answers, games and transcripts",
        description="Honour a participant's withdrawal (e.g. asked by e-mail): their questionnaire answers, game "
                    "rows, event lines and transcripts are deleted and their platform ids cleared; the study keeps "
                    "one line (who withdrew and when), and their order sequence goes to the next participant.")
    withdraw.add_argument("participant", metavar="ID", help="participant id, e.g. P07 or W00012")
    _study_file(withdraw)
    invite.add_argument("--n", type=int, required=True, help="how many links")
    invite.add_argument("--url", help="the participants' address, e.g. https://study.example.org "
                                      "(default: the study file's online.base_url)")
    invite.add_argument("--out", type=Path, metavar="CSV",
                        help="where to write the links (default: STUDY-invites-FIRST-LAST.csv beside the study file)")
    return parser


def _invite_url(args: argparse.Namespace, study: Study) -> str:
    url = args.url or (study.online.base_url if study.online else None)
    if not url:
        raise ConfigError("study invite needs the participants' address: --url https://HOST or online.base_url "
                          "in the study file")
    try:
        OnlineSpec(base_url=url)
    except ValidationError:
        raise ConfigError(f"--url {url!r} is not an http(s) address without query, e.g. "
                          "https://study.example.org") from None
    return url


def _write_invites(path: Path, invites: list[Invite], url: str) -> None:
    """The links as CSV (number, link, code), created for the owner only, never over another file."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["invite", "participant", "link", "code"])
        for i in invites:
            writer.writerow([i.number, f"L{i.number:04d}", i.link(url), i.code])


async def _invite(args: argparse.Namespace, study: Study) -> str:
    url = _invite_url(args, study)
    async with await StudyRun.open(study) as run:
        invites = await OnlineRun(run).invite(args.n)
    out = args.out or study.path.parent / (
        f"{study.path.stem}-invites-{invites[0].number}-{invites[-1].number}.csv")
    try:
        _write_invites(out, invites, url)
    except FileExistsError:
        raise ConfigError(f"{out} exists already: name another with --out (the links made are lost; "
                          "make new ones)") from None
    lines = [f"L{i.number:04d}  {i.link(url)}" for i in invites]
    return "\n".join([*lines, f"{len(invites)} links written to {out} (keep it: the database keeps only hashes)"])


async def _run(args: argparse.Namespace) -> str:
    study = read_study(args.study)
    if args.action == "invite":
        return await _invite(args, study)
    async with await StudyRun.open(study) as run:
        if args.action == "withdraw":
            deleted = await run.withdraw(args.participant)
            return (f"{args.participant} withdrew: their answers, games and {deleted} transcript"
                    f"{'s' if deleted != 1 else ''} deleted; their order sequence goes to the next participant")
        if args.action == "status":
            status = await run.status()
            return status.model_dump_json(indent=2) if args.json else format_status(status)
        if args.action == "link":
            return _link_line(args.participant, await lab_link(run, args.participant), args.pages_port)
        changed = await {"next": run.next_participant, "pause": run.pause, "resume": run.resume,
                         "drop": run.drop}[args.action](args.participant)
        line = participant_line(changed)
        if args.action == "next" and study.questionnaires is not None:
            line += "\n" + _link_line(args.participant, await lab_link(run, args.participant), args.pages_port)
        return line


def _link_line(pid: str, code: str, port: int) -> str:
    return (f"{pid}'s pages (open on this machine's browser; their games start when the pages reach them): "
            f"{lab_address(code, port)}")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        print(asyncio.run(_run(args)))
    except (ConfigError, StoreError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
