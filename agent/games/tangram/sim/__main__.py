"""``python -m agent.games.tangram.sim``: play simulated games against an agent and print what it did.

By default our own agent runs in-process from ``--config``; ``--connect ws://HOST:PORT``
evaluates any agent server that is already running instead; ``--study FILE --participants N``
pilots a whole study (sim/pilot.py). Exit status: 0 when every game ran (whatever the agent did;
in a pilot, every participant completed), 1 when a game could not be played, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from dotenv import load_dotenv

from agent.core.config import apply_tags
from agent.games.tangram.config import ConfigError, load_config
from agent.games.tangram.sim.client import GODOT_TWEEN_S
from agent.games.tangram.sim.feedback_delay import PRESETS, FeedbackDelay, parse_feedback_delay
from agent.games.tangram.sim.humans import HUMAN_KINDS
from agent.games.tangram.sim.progress import Progress
from agent.games.tangram.sim.runner import (
    AgentStartError,
    GameResult,
    RunOptions,
    attach_transcripts,
    format_summary,
    read_transcript_dir,
    run_games,
    run_in_process,
    summarize,
)

MAX_PARALLEL = 8


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m agent.games.tangram.sim", description=__doc__.splitlines()[0])
    target = p.add_mutually_exclusive_group()
    target.add_argument("--config", type=Path, help="agent config to run in-process (default: built-in defaults)")
    target.add_argument("--connect", metavar="URL", help="evaluate a running agent server, e.g. ws://127.0.0.1:5000")
    target.add_argument("--study", type=Path, metavar="FILE",
                        help="pilot a study: serve it in-process and play every game of --participants scripted "
                             "participants (its own database, the conditions' transcript folders; docs/study.md)")
    p.add_argument("--participants", type=int, default=None, metavar="N",
                   help="with --study: participants to pilot (default: one per order sequence of the design)")
    p.add_argument("--effect", action="append", default=[], metavar="CONDITION=POINTS",
                   help="with --study: simulated questionnaire answers after CONDITION's games are drawn POINTS "
                        "scale points higher on every scale, e.g. planner=+1.0 (repeatable; default 0)")
    p.add_argument("--participant-prefix", default="P", metavar="TEXT",
                   help="with --study: participant ids are TEXT01, TEXT02, ... (default P)")
    p.add_argument("--store", type=Path, metavar="FILE",
                   help="with --study: the pilot's database, which must not exist (default: a new "
                        "<study>-pilot-<UTC time>.db beside the study's own, which the pilot never touches)")
    p.add_argument("--games", type=int, default=1, help="games to play (default 1)")
    p.add_argument("--turns", type=int, default=7, help="rounds per game: the human's turn then the AI's (default 7)")
    p.add_argument("--human", choices=HUMAN_KINDS, default="cooperative", help="scripted partner (default cooperative)")
    p.add_argument("--seed", type=int, default=0, help="seed for humans and objectives (default 0)")
    p.add_argument("--objective", help="objective text for every game (default: drawn from the game's six)")
    p.add_argument("--tag", action="append", default=[], metavar="KEY=VALUE",
                   help="with --config: label the agent's transcripts, as python -m agent --tag does (repeatable)")
    p.add_argument("--report", type=Path, metavar="DIR", help="write index.html, summary and transcripts here")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object on the last line")
    p.add_argument("--parallel", type=int,
                   help="games at once (default: all, up to 8, for the offline planner; 1 otherwise)")
    p.add_argument("--deadline", type=float,
                   help="seconds to wait for an AI turn to end (default: the config's turn deadline + 5, or 65)")
    p.add_argument("--chat-timeout", type=float, default=30.0, help="seconds to wait for a chat reply (default 30)")
    p.add_argument("--tween", type=float, default=GODOT_TWEEN_S,
                   help="seconds the game animates a play before its feedback (default 0.5)")
    p.add_argument("--feedback-delay", metavar="S|LOW-HIGH|PRESET", type=_feedback_delay,
                   help="seconds from a play to its playFeedback: fixed (2.5), a range drawn per play (2.3-4.8) "
                        f"or a preset ({', '.join(f'{k}: {v.describe()}' for k, v in PRESETS.items())}); "
                        "default: the tween and one frame (about 0.52 s)")
    p.add_argument("--build", choices=("shipped", "source"), default="shipped",
                   help="game build to imitate: 'shipped' ignores the agent's error frames (the build users run), "
                        "'source' honours them (the current source)")
    p.add_argument("--stale-collisions", action="store_true",
                   help="report a played piece's collisions one physics step short of its target, as Godot can")
    p.add_argument("--false-tint", action="store_true",
                   help="feedback pictures show the moved piece and its neighbour in the overlap tint while the "
                        "state says no collision, as the real game did in 2 of 4 turns")
    p.add_argument("--state-layout", choices=("dict", "list"), default="dict",
                   help="on_board/off_board as objects (current game) or lists (older build)")
    p.add_argument("--transcripts", type=Path, metavar="DIR",
                   help="with --connect: read that agent's JSONL transcripts from DIR for LLM numbers")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bar (it is off anyway when stderr is not a terminal)")
    p.add_argument("-v", "--verbose", action="store_true", help="log the agent's and the simulator's INFO messages")
    return p


def main(argv: list[str] | None = None) -> int:
    load_dotenv(Path.cwd() / ".env", override=False)  # as `python -m agent` does, for LLM configs
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    if args.study is not None:
        return _pilot(args)
    if args.participants is not None or args.store is not None:
        print("error: --participants and --store go with --study", file=sys.stderr)
        return 2
    config = None
    if not args.connect:
        try:
            config = apply_tags(load_config(args.config), _tags(args.tag))
        except ConfigError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    if args.parallel is not None:
        parallel = args.parallel
    elif config is not None and config.player == "planner":
        parallel = min(args.games, MAX_PARALLEL)
    else:
        parallel = 1
    deadline = args.deadline if args.deadline is not None else (config.turn.deadline + 5 if config else 65.0)
    try:
        options = RunOptions(games=args.games, turns=args.turns, human=args.human, seed=args.seed,
                             objective=args.objective, deadline=deadline, chat_timeout=args.chat_timeout,
                             tween=args.tween, parallel=parallel, state_layout=args.state_layout,
                             build=args.build, stale_collisions=args.stale_collisions,
                             feedback_delay=args.feedback_delay, false_tint=args.false_tint)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        summary = asyncio.run(_run(args, config, options))
    except AgentStartError as exc:
        print(f"error: {exc} (use --connect URL to evaluate an agent that is already running)", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    if summary["game_errors"] and not summary["turns"]:
        # Nothing was played: a page of zeros would hide the one thing that matters.
        print(f"error: no game could be played against {summary['agent']}: {summary['game_errors'][0]}",
              file=sys.stderr)
    else:
        print(format_summary(summary))
    if args.json:
        print(json.dumps(summary, separators=(",", ":")))
    return 1 if summary["game_errors"] else 0


def _pilot(args: argparse.Namespace) -> int:
    from agent.core.studies.report import format_status
    from agent.core.studies.simulated import parse_effects
    from agent.core.studies.store import StoreError
    from agent.games.tangram.link.study import StudySetupError
    from agent.games.tangram.sim.pilot import (
        PilotError,
        format_games,
        participant_ids,
        pilot_json,
        pilot_store,
        pilot_study,
        read_pilot_study,
        run_pilot,
    )

    try:
        study = read_pilot_study(args.study)
        count = args.participants if args.participants is not None else len(study.plan.sequences)
        ids = participant_ids(count, args.participant_prefix) if count >= 1 else []
        options = RunOptions(games=1, turns=args.turns, human=args.human, seed=args.seed, objective=args.objective,
                             deadline=args.deadline if args.deadline is not None else 65.0,
                             chat_timeout=args.chat_timeout, tween=args.tween, state_layout=args.state_layout,
                             build=args.build, stale_collisions=args.stale_collisions,
                             feedback_delay=args.feedback_delay, false_tint=args.false_tint)
        effects = parse_effects(args.effect, study.plan.conditions)
        study = pilot_study(study, args.store or pilot_store(study), ids, args.turns)
        result = asyncio.run(run_pilot(study, ids, options, effects))
    except (ConfigError, ValueError, PilotError, StoreError, StudySetupError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    print("\n".join([*result.notes, format_games(result.games), "", format_status(result.status)]))
    if args.json:
        print(json.dumps(pilot_json(result), separators=(",", ":")))
    done = result.status.counts["completed"]
    return 0 if done == len(ids) else 1


def _feedback_delay(text: str) -> FeedbackDelay:
    try:
        return parse_feedback_delay(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _tags(items: list[str]) -> dict[str, str]:
    tags = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--tag {item!r} is not KEY=VALUE (e.g. --tag condition=explain)")
        tags[key.strip()] = value.strip()
    return tags


async def _run(args: argparse.Namespace, config: Any, options: RunOptions) -> dict[str, Any]:
    from agent.games.tangram.sim.report import write_report

    progress = Progress(options.games * options.turns, enabled=False if args.no_progress else None)

    def on_turn(result: GameResult, turn: Any) -> None:
        note = f"game {result.index}: {turn.ended_by}" if turn is not None else f"game {result.index}: stopped"
        progress.advance(1, note)

    started = time.time()
    t0 = time.monotonic()
    transcripts_read = False
    try:
        if args.connect:
            agent = args.connect
            results = await run_games(args.connect, options, on_turn)
            if args.transcripts:
                attach_transcripts(results, read_transcript_dir(args.transcripts, since=started - 1),
                                   Path(args.transcripts))
                transcripts_read = True
        else:
            agent = f"in-process {args.config or '(defaults)'} ({config.player})"
            with tempfile.TemporaryDirectory(prefix="sim-transcripts-") as tmp:
                where = args.report / "agent-transcripts" if args.report else Path(tmp)
                results = await run_in_process(config, options, where, on_turn)
                transcripts_read = True
    finally:
        progress.close()
    summary = summarize(results, options, agent, transcripts_read, time.monotonic() - t0)
    if args.report:
        index = write_report(args.report, summary, results)
        summary["report"] = str(index)
        (args.report / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return summary


if __name__ == "__main__":
    sys.exit(main())
