"""Run by tests/core/test_packaging.py with the interpreter of a fresh venv that has the built wheel
installed, from a folder away from the checkout: everything a user does after ``pip install .``.

    python installed_play.py CHECKOUT WORK_DIR

Offline, on loopback only. Each step prints one ``ok ...`` line; any failure raises (exit 1).
Not a pytest module (its name does not start with ``test_``): it must import nothing from the
checkout, only the installed ``agent`` package and the standard library.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path


def step(text: str) -> None:
    print(f"ok {text}", flush=True)


def installed_package(checkout: Path) -> Path:
    import agent

    where = Path(agent.__file__).resolve().parent
    assert checkout not in where.parents and where != checkout / "agent", f"agent imported from {where}"
    assert (where / "data" / "configs").is_dir(), "the wheel carries no agent/data/configs"
    step(f"agent imported from {where}")
    return where


def every_shipped_config_and_template() -> None:
    """Each shipped config through the CLI's own start-up checks (config, templates, data files)."""
    from agent.cli import prepare
    from agent.core import resources

    configs = resources.shipped_configs()
    assert len(configs) >= 10, configs
    for path in configs:
        game, config, _ = prepare(["--config", path.stem])
        prompts = getattr(config, "prompts_dir", None)
        assert prompts is None or config.resolve_dir(Path(prompts)).is_dir(), f"{path.stem}: no folder {prompts}"
    for name in ("tangram", "hive", "forge", "boardgame"):
        prepare(["--game", name])  # each game's built-in defaults
    from agent.games.forge.config import ForgeConfig

    assert ForgeConfig(player="llm").prompts_dir.is_dir()  # the default folder, no config at all
    step(f"{len(configs)} shipped configs and their templates pass the start-up checks")


def other_templates_and_data(where: Path) -> None:
    """The package's own data files: the analysis template and prices, the replay page, the
    simulator's report, the console's static files, the figure library and phrases."""
    from importlib import resources as importlib_resources

    from agent.games.tangram.dialogue.phrases import load_phrases
    from agent.games.tangram.planner.library import load_library

    for package, name in (("agent.core.studies", "prices.yaml"), ("agent.analyze", "templates/summary.html.j2"),
                          ("agent.games.hive", "replay_page.html.j2"),
                          ("agent.games.tangram.sim", "templates/report.html.j2"),
                          ("agent.games.tangram.console", "static/index.html")):
        assert (importlib_resources.files(package) / name).read_text(encoding="utf-8").strip(), (package, name)
    library = load_library()
    assert len(library) >= 40
    assert load_phrases()
    from agent.games.tangram.offline.agent import OfflineAgent

    planner = OfflineAgent(library)  # the chat's data: languages, the gloss, intent examples, Portuguese lines
    reply = planner.chat("A fish", {}, "vamos começar pelas peças grandes")
    assert planner.last_reply_kind == "strategy_big" and "peças grandes" in reply, reply
    step(f"{len(library)} figures, phrases (a Portuguese line answered) and the package's templates load")


def figure_matcher() -> None:
    from agent.games.tangram.planner.library import load_library
    from agent.games.tangram.planner.matching import STOPWORDS, find_figure, match_objective

    library = load_library()
    assert "the" in STOPWORDS
    figure, exact = find_figure("let's build a little hosue", library)  # a typo is forgiven
    assert figure is not None and figure.name == "house" and exact, figure
    related, exact = match_objective("an aquarium", library)  # a related word, not a name
    assert related.name == "fish" and not exact
    step("the figure matcher reads its word lists")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def console_script(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def tangram_through_the_console_script(work: Path) -> None:
    """``tangram-agent --config offline`` served, one simulated game of three turns against it."""
    port = free_port()
    log = (work / "tangram-agent.log").open("wb")
    server = subprocess.Popen([console_script("tangram-agent"), "--config", "offline", "--port", str(port)],
                              cwd=work, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:
            assert server.poll() is None, (work / "tangram-agent.log").read_text()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "tangram-agent did not listen within 30 s"
                time.sleep(0.2)
        sim = subprocess.run([sys.executable, "-m", "agent.games.tangram.sim", "--connect", f"ws://127.0.0.1:{port}",
                              "--games", "1", "--turns", "3", "--json", "--no-progress",
                              "--report", str(work / "report")],
                             cwd=work, capture_output=True, text=True, timeout=120)
        assert sim.returncode == 0, sim.stdout[-2000:] + sim.stderr[-2000:]
        summary = json.loads(sim.stdout.strip().splitlines()[-1])
        assert summary["turns_finished"] == 3 and not summary["game_errors"], summary
        assert summary["turns_error"] == 0 and summary["protocol_violations"] == 0, summary
        assert (work / "report" / "index.html").is_file()
    finally:
        server.terminate()
        server.wait(timeout=20)
        log.close()
    text = (work / "tangram-agent.log").read_text(errors="replace")
    assert "Traceback" not in text and "FileNotFoundError" not in text, text[-3000:]
    step("tangram: tangram-agent --config offline played 3 simulated turns, report written")


def hive_match(work: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "agent.games.hive.eval", "--a", "ours", "--b", "example", "-n", "1",
                          "--jobs", "1", "--logs", str(work / "hive-logs")],
                         cwd=work, capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "played out (no forfeit) 1" in run.stdout and "A forfeits: 0" in run.stdout, run.stdout
    step("hive: one match against the example bot, played out")


def boardgame_matches(work: Path) -> None:
    from agent.core.resources import find_shipped_config

    config = find_shipped_config("boardgame-llm")
    assert config is not None
    for args in (["--game", "connect_four", "--a", "best", "--b", "strong", "--search-seconds", "0.05"],
                 ["--game", "tictactoe", "--a", "llm", "--b", "strong", "--config", str(config),
                  "--fake-llm", "chaotic"]):
        run = subprocess.run([sys.executable, "-m", "agent.games.boardgame.eval", *args, "--matches", "1"],
                             cwd=work, capture_output=True, text=True, timeout=180)
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        assert "1 matches" in run.stdout and "protocol errors 0" in run.stdout, run.stdout
    step("boardgame: a connect-four match and a tic-tac-toe match with the LLM player (fake LLM)")


async def forge_games(work: Path) -> None:
    """The heuristic player and the LLM player (the shipped forge-gpt4o config and templates,
    against the package's fake OpenAI server) each answer a whole fake-Forge game."""
    from agent.core.config import read_config_mapping, validate_config
    from agent.core.resources import find_shipped_config
    from agent.core.testing.fake_openai import FakeOpenAI
    from agent.games.forge.config import ForgeConfig
    from agent.games.forge.factory import make_decider
    from agent.games.forge.fake.client import FakeForge, Report
    from agent.games.forge.fake.engine import Game
    from agent.games.forge.fake.llm import sensible
    from agent.games.forge.server import ForgeServer

    shipped = find_shipped_config("forge-gpt4o")
    assert shipped is not None
    async with FakeOpenAI(responder=sensible(seed=1)) as fake:
        llm = read_config_mapping(shipped)
        llm["llm"].update(base_url=fake.base_url, api_key_required=False, request_timeout=5)
        for data in ({}, llm):
            config = validate_config(ForgeConfig, {**data, "server": {"port": 0, "host": "127.0.0.1"},
                                                   "transcripts": {"dir": str(work / "forge-transcripts")}}, shipped)
            decider = make_decider(config)
            server = ForgeServer(config, decider)
            await server.start()
            try:
                async with FakeForge(f"http://127.0.0.1:{server.port}/decide") as forge:
                    report = await forge.play(Game(7, "action", max_turns=6), Report())
            finally:
                await server.shutdown()
                if decider.client is not None:
                    await decider.client.aclose()
            assert len(report.decisions) >= 5 and report.valid_share == 1.0, report.outcomes()
        assert fake.chat_requests, "the LLM player never asked the model"
    step("forge: a fake-Forge game answered by the heuristic and one by the LLM player (fake LLM)")


def main() -> int:
    checkout, work = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    assert Path.cwd().resolve() == work and checkout not in work.parents
    assert not os.environ.get("PYTHONPATH"), "the checkout must not be on the path"
    where = installed_package(checkout)
    every_shipped_config_and_template()
    other_templates_and_data(where)
    figure_matcher()
    tangram_through_the_console_script(work)
    hive_match(work)
    boardgame_matches(work)
    asyncio.run(forge_games(work))
    return 0


if __name__ == "__main__":
    sys.exit(main())
