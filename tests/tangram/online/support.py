"""An online study served in-process for the tests: a study file of two planner conditions, a fake
built game (small files standing in for the engine and pack: nothing of GAIPS or Godot), and the
participants' origin on a loopback port, with the experimenter console when the conditions' config
enables it (wired as the agent wires it). No tests live here."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from agent.core.images import ImagePool
from agent.core.redact import Secrets
from agent.core.studies.online import OnlineRun
from agent.core.studies.run import StudyRun
from agent.core.testing.fake_openai import FakeOpenAI, FakeReply
from agent.games import read_study
from agent.games.tangram.console.start import ConsoleServer
from agent.games.tangram.online.app import make_app
from agent.games.tangram.online.assets import Assets, prepare_assets
from agent.games.tangram.online.deadlines import make_runner
from agent.games.tangram.online.guard import Limits, RateLimiter
from agent.games.tangram.online.public import close_seats, seats_of, start_console
from agent.games.tangram.online.sockets import GameSockets
from tests.tangram.support import MOVE, is_chat_request

STUDY = """name: web-pilot
design: within
conditions:
  planner: {config: planner.yaml}
  quiet: {config: planner.yaml, overrides: {turn: {thinking_line: false}}}
online:
  consent: "We record your moves and chat.\\n\\nTaking part is voluntary."
  completion_code: C0DE42
  completion_url: https://app.prolific.com/submissions/complete?cc=C0DE42
  recruitment: RECRUITMENT
"""


def fake_build(folder: Path, wasm_bytes: int = 200_000) -> Path:
    """A built game's folder as the builder leaves it, with stand-ins for the engine and pack (the
    engine's ``wasm_bytes`` long, and 8 more)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "webgame.json").write_text(json.dumps({"executable": "index", "mainPack": "index.pck",
                                                     "engine": "4.6.stable", "threads": False}))
    (folder / "index.js").write_text("var Engine = function () {};\n" * 2000)
    (folder / "index.wasm").write_bytes(b"\0asm\x01\0\0\0" + bytes(wasm_bytes))
    (folder / "index.pck").write_bytes(b"GDPC" + bytes(100_000))
    (folder / "index.audio.worklet.js").write_text("// worklet\n")
    return folder


def write_study(tmp_path: Path, recruitment: str = "invite", config: str = "player: planner\n",
                online: str = "", study: str = STUDY) -> Path:
    """The study (its conditions' config is ``config``; ``online`` adds lines to its online section;
    ``study``: another study file of the same shape)."""
    (tmp_path / "planner.yaml").write_text(f"{config}transcripts: {{dir: {tmp_path / 'transcripts'}}}\n")
    path = tmp_path / "study.yaml"
    path.write_text(study.replace("RECRUITMENT", recruitment) + online)
    return path


@dataclass
class Served:
    url: str
    online: OnlineRun
    run: StudyRun
    sockets: GameSockets
    assets: Assets
    limiter: RateLimiter
    console: ConsoleServer | None = None

    @property
    def ws_url(self) -> str:
        return self.url.replace("http://", "ws://") + "/ws"


@contextlib.asynccontextmanager
async def served_study(tmp_path: Path, recruitment: str = "invite", limits: Limits | None = None,
                       trusted_proxy: str | None = None, config: str = "player: planner\n",
                       online: str = "", study_text: str = STUDY, wasm_bytes: int = 200_000) -> AsyncIterator[Served]:
    study = read_study(write_study(tmp_path, recruitment, config, online, study_text))
    assets = prepare_assets(fake_build(tmp_path / "built", wasm_bytes), tmp_path / "cache")
    async with await StudyRun.open(study) as run:
        online = OnlineRun(run)
        seats, planner = await seats_of(run)
        every = [*seats.values(), planner]
        limiter = RateLimiter(limits)
        images = ImagePool(1)
        sockets = GameSockets(online, seats, study.conditions[0].config, limiter, images=images,  # type: ignore[arg-type]
                              planner=planner)
        console = await start_console(run, online, sockets, every, Secrets(), 0)
        runner = make_runner(make_app(online, assets, sockets, limiter, trusted_proxy), limiter.limits)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        try:
            yield Served(f"http://127.0.0.1:{runner.addresses[0][1]}", online, run, sockets, assets, limiter,
                         console)
        finally:
            await sockets.close_all()
            await runner.cleanup()
            if console is not None:
                await console.stop()
            images.close()
            await close_seats(every)


# ---- priced LLM games (the spend caps, the console's notices) ----------------------------------------

CALL_USD = (1000 * 2.5 + 100 * 10) / 1e6
"""What each call of :func:`priced` costs at the prices of :func:`llm_config`: $0.0035."""


def priced(request: dict[str, Any]) -> FakeReply:
    """The model's answers, each reporting 1000 prompt and 100 completion tokens."""
    if is_chat_request(request):
        return FakeReply.ok_json({"reply": "We could build the house together."}, prompt_tokens=1000,
                                 completion_tokens=100)
    return FakeReply.ok_json(MOVE, prompt_tokens=1000, completion_tokens=100)


async def joined(served: Served) -> tuple[str, str]:
    """A new invited participant who agreed: their link's code and their game's ticket."""
    (invite,) = await served.online.invite(1)
    await served.online.start(invite.code)
    await call(served, "consent", invite.code, given=True)
    game = await call(served, "game", invite.code)
    return invite.code, game["ticket"]


async def records(served: Served, participant: str, kind: str) -> list[dict[str, Any]]:
    """The ``kind`` records of the participant's game's transcript."""
    (game,) = [g for g in await served.run.store.games() if g.participant == participant]
    path = served.run.transcript_of(game)
    assert path is not None
    text = await asyncio.to_thread(path.read_text)
    return [r for r in map(json.loads, text.splitlines()) if r.get("kind") == kind]


async def call(served: Served, path: str, code: str, **body: Any) -> Any:
    async with aiohttp.ClientSession() as http, \
            http.post(f"{served.url}/api/{path}", json={"code": code, **body}) as response:
        assert response.status == 200, await response.text()
        return await response.json()


def llm_config(base_url: str) -> str:
    return (f"player: llm\nllm: {{base_url: '{base_url}', api_key_required: false, usd_per_million_input: 2.5, "
            "usd_per_million_output: 10, probe_dialect: false}\nturn: {deadline: 20}\n")


@contextlib.asynccontextmanager
async def priced_study(tmp_path: Path, online: str, config: str = "") -> AsyncIterator[tuple[FakeOpenAI, Served,
                                                                                              list[str]]]:
    """A study served with a priced LLM condition (:func:`priced`, plus ``config``), and the spend caps'
    notices, as they are told, in a list."""
    async with FakeOpenAI(responder=priced) as fake, \
            served_study(tmp_path, config=f"{llm_config(fake.base_url)}{config}", online=online) as served:
        told: list[str] = []
        served.online.spend.subscribe(told.append)
        yield fake, served, told


@contextlib.asynccontextmanager
async def bare_sockets(tmp_path: Path, config: str) -> AsyncIterator[tuple[StudyRun, OnlineRun, GameSockets]]:
    """A study opened with no origin served: its run, online run and sockets (no conditions played)."""
    study = read_study(write_study(tmp_path, config=config))
    async with await StudyRun.open(study) as run:
        online = OnlineRun(run)
        yield run, online, GameSockets(online, {}, study.conditions[0].config, RateLimiter())  # type: ignore[arg-type]
