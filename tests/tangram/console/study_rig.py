"""A study served with the console, in a loop thread (as :class:`~tests.tangram.console.support.Rig`
serves one config): the study's run, every condition's seat, the console's study panel."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml

from agent.core.redact import Secrets
from agent.core.studies.run import StudyRun
from agent.games import read_study
from agent.games.tangram.console.start import start_study_console
from agent.games.tangram.console.web import ConsoleServer
from agent.games.tangram.link.server import AgentServer
from agent.games.tangram.link.study import StudyLink
from agent.games.tangram.sim import GameClient
from tests.tangram.console.support import LoopRig

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


class StudyRig(LoopRig):
    def __init__(self, conditions: dict[str, Any]) -> None:
        super().__init__("console-study-", "console-study-rig")
        self.study = read_study(write_study(self.dir, conditions))
        self.run_: StudyRun
        self.link: StudyLink
        self.web: ConsoleServer
        self.server: AgentServer
        self.games: list[GameClient] = []

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
