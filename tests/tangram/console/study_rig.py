"""A study served with the console, in a loop thread (as :class:`~tests.tangram.console.support.Rig`
serves one config): the study's run, every condition's seat, the console's study panel."""

from __future__ import annotations

import asyncio
import concurrent.futures
import shutil
import tempfile
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import yaml

from agent.cli import read_study
from agent.core.redact import Secrets
from agent.core.studies.run import StudyRun
from agent.games.tangram.console.start import start_study_console
from agent.games.tangram.console.web import ConsoleServer
from agent.games.tangram.link.server import AgentServer
from agent.games.tangram.link.study import StudyLink
from agent.games.tangram.sim import GameClient

T = TypeVar("T")


def write_study(folder: Path, conditions: dict[str, Any], **base: Any) -> Path:
    (folder / "base.yaml").write_text(yaml.safe_dump({
        "player": "planner", "turn": {"deadline": 30}, "transcripts": {"dir": str(folder / "transcripts")},
        "console": {"port": 0}, **base}))
    path = folder / "study.yaml"
    path.write_text(yaml.safe_dump({"name": "console-study", "design": "within",
                                    "conditions": {n: {"config": "base.yaml", **c} for n, c in conditions.items()}},
                                   sort_keys=False))
    return path


class StudyRig:
    def __init__(self, conditions: dict[str, Any]) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="console-study-"))
        self.study = read_study(write_study(self.dir, conditions))
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="console-study-rig", daemon=True)
        self.run_: StudyRun
        self.link: StudyLink
        self.web: ConsoleServer
        self.server: AgentServer
        self.games: list[GameClient] = []

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def call(self, fn: Callable[[], T]) -> T:
        async def wrapper() -> T:
            return fn()
        return self.run(wrapper())

    def __enter__(self) -> StudyRig:
        self.thread.start()
        self.run(self._start())
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.run(self._stop(), timeout=20)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(5)
            shutil.rmtree(self.dir, ignore_errors=True)

    async def _start(self) -> None:
        self.run_ = await StudyRun.open(self.study)
        self.link = await StudyLink.build(self.run_, Secrets())
        config = self.link.first.config
        self.web = await start_study_console(config, self.link, Secrets())
        server_cfg = config.server.model_copy(update={"host": "127.0.0.1", "port": 0})
        self.server = AgentServer(config.model_copy(update={"server": server_cfg}), self.link.first.factory,
                                  study_link=self.link)
        await self.server.start()

    async def _stop(self) -> None:
        for game in self.games:
            await game.close()
        await self.server.shutdown()
        await self.web.stop()
        await self.link.aclose()
        await self.run_.close()

    @property
    def url(self) -> str:
        return self.web.url

    def game(self, seed: int = 0) -> GameClient:
        game = GameClient(self.server.url, objective="A house", seed=seed, tween=0.1)
        self.run(game.connect())
        self.games.append(game)
        return game
