"""The console's test rig: agent server, console and simulated games in a loop thread; a headless browser.

Selenium's calls block, so the agent, the console and the simulator's games run in their own event
loop in a background thread and the test drives the browser from the main thread, handing
coroutines to the loop with :meth:`Rig.run` / :meth:`Rig.submit`.

The browser is Debian's ``chromium`` with its ``chromedriver`` (``apt-get install chromium
chromium-driver``; ``.ci/run`` installs them). Without them, :func:`browser_or_skip_reason` says why.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, Self, TypeVar

import pytest

from agent.games.tangram.config import Config
from agent.games.tangram.console.hub import Console
from agent.games.tangram.console.web import ConsoleServer
from agent.games.tangram.link.factory import make_player_factory
from agent.games.tangram.link.server import AgentServer, serve_agent
from agent.games.tangram.sim import GameClient
from tests.skips import in_ci

T = TypeVar("T")

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
DRIVER_NAMES = ("chromedriver",)


def find_browser() -> tuple[str | None, str | None]:
    browser = next((p for p in (shutil.which(n) for n in CHROMIUM_NAMES) if p), None)
    driver = next((p for p in (shutil.which(n) for n in DRIVER_NAMES) if p), None)
    return browser, driver


def browser_or_skip_reason() -> str | None:
    """None when a headless browser can be driven here, else the reason the browser tests skip."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[dev]')"
    browser, driver = find_browser()
    if browser is None:
        return "no Chromium found (apt-get install chromium chromium-driver)"
    if driver is None:
        return "no chromedriver found (apt-get install chromium-driver)"
    return None


def start_browser(width: int = 1600, height: int = 1000) -> Any:
    """A headless Chromium driven through chromedriver."""
    from selenium import webdriver

    browser, driver = find_browser()
    options = webdriver.ChromeOptions()
    options.binary_location = browser or ""
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                f"--window-size={width},{height}", "--force-device-scale-factor=1", "--lang=en-GB"):
        options.add_argument(arg)
    return webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=driver))


def skip_without_browser(what: str, reason: str | None) -> pytest.MarkDecorator:
    """A browser test module's ``pytestmark``: skip when ``reason`` (from :func:`browser_or_skip_reason`)
    says no browser can be driven here, except in CI, where :func:`module_browser` fails instead (a broken
    install must not pass as a skip)."""
    return pytest.mark.skipif(reason is not None and not in_ci(), reason=f"{what}: {reason}")


def module_browser(what: str, reason: str | None, width: int = 1600, height: int = 1000) -> Iterator[Any]:
    """The body of a browser test module's ``browser`` fixture (``yield from`` it): a headless Chromium,
    quit at the end. Under CI a missing browser (``reason``) or one that does not start fails the tests;
    elsewhere a browser that does not start skips them, saying why."""
    if reason is not None:  # only in CI: elsewhere skip_without_browser skipped the module
        pytest.fail(f"{what} under CI=true: {reason}", pytrace=False)
    try:
        driver = start_browser(width, height)
    except Exception as exc:
        if in_ci():
            raise  # a broken install fails in CI, with the browser's own message
        pytest.skip(f"{what}: headless Chromium did not start: {str(exc)[:200]}")
    yield driver
    driver.quit()


def ready_for_screenshots(out: Path) -> bool:
    """For a screenshot script: whether a headless browser can be driven here (if not, the reason goes
    to stderr) and, when it can, the output folder made."""
    reason = browser_or_skip_reason()
    if reason is not None:
        print(f"cannot take screenshots: {reason}", file=sys.stderr)
        return False
    out.mkdir(parents=True, exist_ok=True)
    return True


class LoopRig:
    """An event loop in a thread of its own, for tests that drive pages from synchronous code, and a
    scratch folder; subclasses start and stop what they serve in ``_start`` and ``_stop``."""

    def __init__(self, prefix: str, name: str) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix=prefix))
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def call(self, fn: Callable[[], T]) -> T:
        """Run a plain function on the loop (to read the console's state safely)."""
        async def wrapper() -> T:
            return fn()
        return self.run(wrapper())

    def __enter__(self) -> Self:
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
        raise NotImplementedError

    async def _stop(self) -> None:
        raise NotImplementedError


class Rig(LoopRig):
    """An agent server with the console in front of it, on free loopback ports, in a loop thread."""

    def __init__(self, deadline: float = 30.0, settings: dict[str, Any] | None = None, **console: Any) -> None:
        """``settings``: more of the agent's config (an LLM player against a fake server, say)."""
        super().__init__("console-test-", "console-rig")
        self.config = Config.model_validate({**(settings or {}), "turn": {"deadline": deadline},
                                             "transcripts": {"dir": str(self.dir)},
                                             "console": {"enabled": True, **console}})
        self.console: Console
        self.web: ConsoleServer
        self.server: AgentServer
        self.games: list[GameClient] = []
        self._agent: contextlib.AbstractAsyncContextManager[AgentServer] | None = None

    # ------------------------------------------------------------------ life

    async def _start(self) -> None:
        self.console = Console(self.config)
        self.web = ConsoleServer(self.console, "127.0.0.1", 0, self.config.console.token)
        await self.web.start()
        self._agent = serve_agent(self.config, host="127.0.0.1", port=0,
                                  player_factory=self.console.wrap(make_player_factory(self.config)))
        self.server = await self._agent.__aenter__()

    async def _stop(self) -> None:
        for game in self.games:
            await game.close()
        if self._agent is not None:
            await self._agent.__aexit__(None, None, None)
        await self.web.stop()

    @property
    def url(self) -> str:
        return self.web.url

    # ------------------------------------------------------------------ games

    def new_game(self, objective: str = "A house", seed: int = 0) -> tuple[GameClient, str]:
        """Connect a simulated game; returns it and its id on the console (its session id)."""
        async def connect() -> tuple[GameClient, str]:
            before = set(self.console.games)
            game = GameClient(self.server.url, objective=objective, seed=seed, tween=0.1)
            await game.connect()
            self.games.append(game)
            for _ in range(500):
                new = set(self.console.games) - before
                if new:
                    return game, new.pop()
                await asyncio.sleep(0.01)
            raise AssertionError("the console never saw the game connect")
        return self.run(connect())

    def start_turn(self, game: GameClient, wait: float = 60.0) -> concurrent.futures.Future[Any]:
        return self.submit(game.ai_turn(deadline=wait))

    def set_mode(self, game_id: str, mode: str) -> None:
        self.call(lambda: self.console.games[game_id].set_mode(mode, "test"))  # type: ignore[arg-type]

    def records(self, kind: str, timeout: float = 5.0) -> list[dict[str, Any]]:
        """Transcript records of ``kind`` written so far (waits for at least one)."""
        end = time.monotonic() + timeout
        while True:
            found = []
            for path in sorted(self.dir.glob("*.jsonl")):
                for line in path.read_text(encoding="utf-8").splitlines():
                    record = json.loads(line)
                    if record.get("kind") == kind:
                        found.append(record)
            if found or time.monotonic() > end:
                return found
            time.sleep(0.05)
