"""The command line, checked before anything starts: a bad argument gets one clear line."""

from __future__ import annotations

import argparse
import datetime
from pathlib import Path

from benchmarks.tangram.real_game.chat_set import SetError, SetItem, choose, read_set
from benchmarks.tangram.real_game.options import Options

MAX_TURNS = 40
MAX_GAMES = 20


class ArgumentError(ValueError):
    pass


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.tangram.real_game",
        description="Play the real GAIPS Tangram game (its own scenes and GDScript on a Godot web engine, in "
                    "headless Chromium driven as a scripted human) against python -m agent, and print one row "
                    "per AI turn and a summary.")
    p.add_argument("--gaips", type=Path, required=True, help="a GAIPS/TangramCollaborativeAI clone or its bare mirror")
    p.add_argument("--template", type=Path, required=True,
                   help="a Godot 4.x web export template: a folder with index.js and index.wasm, the "
                        "official export templates file, or the npm package holding them")
    agent = p.add_mutually_exclusive_group()
    agent.add_argument("--config", type=Path, help="the agent's config (default: the offline planner)")
    agent.add_argument("--fake-llm", action="store_true",
                       help="play configs/local.yaml on the project's fake OpenAI-compatible server")
    agent.add_argument("--study", type=Path, metavar="FILE",
                       help="drive a study: the agent serves it with its console (its own database in the run's "
                            "folder), --participant is started from the command line and plays their games, "
                            "each a fresh page load ended with Finish; console screenshots go to shots/")
    p.add_argument("--participant", default="P01", metavar="ID",
                   help="with --study: the participant who plays (default P01)")
    p.add_argument("--local-model", action="store_true",
                   help="the agent starts the local real model (python -m agent --local-model); slow")
    p.add_argument("--turns", type=int, default=4, help=f"AI turns per game (1-{MAX_TURNS}, default 4)")
    p.add_argument("--games", type=int, default=None,
                   help=f"games, each a fresh page load (1-{MAX_GAMES}, default 1; with --study: the participant's "
                        "first N games, default all of them)")
    p.add_argument("--reload-turn", type=int, default=None,
                   help="reload the page during this AI turn (default: turn 3 when --turns >= 4; 0: never)")
    p.add_argument("--chat", choices=("default", "requests", "set"), default="default",
                   help="the human's chat lines: 'default' (a greeting, a vague request during a turn), "
                        "'requests' (a constraint, a request in Portuguese and thanks; no reload): the summary "
                        "then says whether the agent kept them and answered in the line's language, or 'set' "
                        "(each line of --set typed in its own game at its stage; writes OUT/sheet.jsonl, the "
                        "judging sheet of benchmarks/tangram/bench_replies.py)")
    p.add_argument("--set", type=Path, metavar="FILE", dest="reply_set",
                   help="with --chat set: the reply set (YAML, bench_replies.py's format)")
    p.add_argument("--items", metavar="ID,ID,...", help="with --chat set: only these items of the set")
    p.add_argument("--turn-timeout", type=float, default=None,
                   help="seconds an AI turn may take before the run calls it stuck (default 300; 900 with "
                        "--local-model)")
    p.add_argument("--step-timeout", type=float, default=60.0, help="seconds one UI step may take (default 60)")
    p.add_argument("--images-mb", type=float, default=40.0,
                   help="keep the frames' pictures as files up to this many MB (0: drop them; default 40)")
    p.add_argument("--out", type=Path, help="output folder (default: /tmp/realgame/runs/<UTC time>)")
    p.add_argument("--chromium", type=Path, default=Path("/usr/bin/chromium"), help="the Chromium to drive")
    p.add_argument("--agent-port", type=int, default=None,
                   help="run the agent on this port and redirect the game's ws://localhost:5000 to it inside the "
                        "page (only when 5000 is taken by something else; the frames still go through the "
                        "browser's own WebSocket)")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object on the last line")
    return p


def options_from(args: argparse.Namespace) -> Options:
    """Options from parsed arguments; ArgumentError with one line for what cannot work."""
    if not args.gaips.is_dir():
        raise ArgumentError(f"--gaips {args.gaips}: no such folder (a GAIPS/TangramCollaborativeAI clone or mirror)")
    if not args.template.exists():
        raise ArgumentError(f"--template {args.template}: no such file or folder (a Godot web export template)")
    if args.config is not None and not args.config.is_file():
        raise ArgumentError(f"--config {args.config}: no such file")
    if not 1 <= args.turns <= MAX_TURNS:
        raise ArgumentError(f"--turns {args.turns}: must be 1 to {MAX_TURNS}")
    games = 1 if args.games is None else args.games
    if args.study is not None and not args.study.is_file():
        raise ArgumentError(f"--study {args.study}: no such file")
    if args.participant != "P01" and args.study is None:
        raise ArgumentError("--participant goes with --study")
    if not 1 <= games <= MAX_GAMES:
        raise ArgumentError(f"--games {games}: must be 1 to {MAX_GAMES}")
    if args.chat == "requests" and (args.turns < 3 or args.study is not None or games != 1):
        raise ArgumentError("--chat requests plays one game of --turns 3 or more, without --study")
    set_items = _set_items(args, games)
    if args.reload_turn is not None and not 0 <= args.reload_turn <= args.turns:
        raise ArgumentError(f"--reload-turn {args.reload_turn}: must be 0 (never) to --turns ({args.turns})")
    for name in ("turn_timeout", "step_timeout"):
        value = getattr(args, name)
        if value is not None and value <= 0:
            raise ArgumentError(f"--{name.replace('_', '-')} {value}: must be positive")
    if args.agent_port is not None and not 1024 <= args.agent_port <= 65535:
        raise ArgumentError(f"--agent-port {args.agent_port}: must be 1024 to 65535")
    if not args.chromium.is_file():
        raise ArgumentError(f"--chromium {args.chromium}: no such file (apt-get install chromium)")
    if args.images_mb < 0:
        raise ArgumentError(f"--images-mb {args.images_mb}: must be 0 or more")
    turn_timeout = args.turn_timeout or (900.0 if args.local_model else 300.0)
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")
    return Options(gaips=args.gaips, template=args.template,
                   out=args.out or Path("/tmp/realgame/runs") / stamp, config=args.config,
                   local_model=args.local_model, fake_llm=args.fake_llm, turns=args.turns, games=games,
                   reload_turn=args.reload_turn, turn_timeout=turn_timeout, step_timeout=args.step_timeout,
                   images_mb=args.images_mb, chromium=args.chromium, agent_port=args.agent_port,
                   study=args.study, participant=args.participant, games_given=args.games is not None,
                   chat=args.chat, set_items=set_items)


def _set_items(args: argparse.Namespace, games: int) -> tuple[SetItem, ...]:
    """The reply set's items to play with ``--chat set`` (nothing otherwise)."""
    if args.chat != "set":
        if args.reply_set is not None or args.items is not None:
            raise ArgumentError("--set and --items go with --chat set")
        return ()
    if args.reply_set is None:
        raise ArgumentError("--chat set needs --set FILE (a reply set)")
    if args.study is not None or games != 1:
        raise ArgumentError("--chat set plays its items one game each, without --study or --games")
    if not args.reply_set.is_file():
        raise ArgumentError(f"--set {args.reply_set}: no such file")
    try:
        items = choose(read_set(args.reply_set), None if args.items is None else args.items.split(","))
    except SetError as exc:
        raise ArgumentError(str(exc)) from exc
    return tuple(items)
