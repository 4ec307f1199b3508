"""Headless Chromium (the system's, through Playwright: never a downloaded browser) with the game's
page: every WebSocket frame both ways, every console line and page error go to the event log, and
steps wait on those events, each within a bound."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.tangram.real_game.agent_run import RunnerError
from benchmarks.tangram.real_game.events import Event, EventLog, ImageStore, Source, frame_event
from benchmarks.tangram.real_game.screen import HEIGHT, WIDTH

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless=new", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
                 f"--window-size={WIDTH},{HEIGHT}", "--autoplay-policy=no-user-gesture-required"]
RUNNER_TAG = "[runner]"
"""Console lines of our own page hook (socket opened/closed), told apart from the game's."""
SOCKET_HOOK = """
(() => {
  const Native = window.WebSocket;
  const redirect = %s;
  function Hooked(url, ...rest) {
    const text = String(url);
    const target = redirect && text.startsWith(redirect[0]) ? redirect[1] + text.slice(redirect[0].length) : url;
    const socket = new Native(target, ...rest);
    const send = socket.send.bind(socket);
    socket.send = (data) => {
      const chat = typeof data === 'string' && data.includes('"chatRequest"');
      if (chat && (window.__runnerKeepChat || window.__runnerMarks)) {
        let frame = {};
        try { frame = JSON.parse(data); } catch (e) {}
        if (window.__runnerKeepChat) {
          window.__runnerKeepChat = false;
          console.log('[runner] chat kept from the agent ' + JSON.stringify({objective: frame.objective,
                                                                             message: frame.message}));
          return;
        }
        window.__runnerMark('chatRequest', String(frame.message));
      }
      return send(data);
    };
    socket.addEventListener('open', () => console.log('[runner] websocket open ' + target));
    socket.addEventListener('close', (e) => console.log('[runner] websocket closed ' + e.code));
    return socket;
  }
  Hooked.prototype = Native.prototype;
  for (const k of ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED']) Hooked[k] = Native[k];
  window.WebSocket = Hooked;
})();
"""
PAGE_CLOCK = """
(() => {
  const marks = [];
  window.__runnerMarks = marks;
  window.__runnerMark = (kind, text) => {
    marks.push([performance.now(), kind, text]);
    if (marks.length > 600) marks.splice(0, marks.length - 400);
  };
  document.addEventListener('mouseup', () => window.__runnerMark('mouseup', ''), true);
  const log = console.log;
  console.log = function (...args) {
    if (args.length === 1 && typeof args[0] === 'string' && args[0].length <= 2000) {
      window.__runnerMark('print', args[0]);
    }
    return log.apply(this, args);
  };
})();
"""
"""The page's own clock on what the ``--chat set`` mode times (``window.__runnerMarks``: [ms, kind,
text] for each mouse button release, each chatRequest sent and each line the game prints). The
runner's clock sees page events only when the browser delivers them, which a busy frame delays."""
"""Reports when the game's socket opens or closes (only the page knows); the socket itself is the
browser's own. With a redirect, the game's ws://localhost:5000 goes to another port instead (for a
machine where 5000 is taken). With ``window.__runnerKeepChat`` set, the game's next ``chatRequest`` is
not sent: its objective and message are printed (:data:`KEPT_CHAT`) and the flag is cleared (the
``--chat set`` mode learns the drawn objective this way without the agent hearing anything)."""
KEPT_CHAT = "[runner] chat kept from the agent "
"""The console line of a chatRequest held back by the hook, followed by its objective and message as JSON."""
GAME_URL = "ws://localhost:5000"


def socket_hook(agent_port: int | None, clock: bool = False) -> str:
    redirect = json.dumps([GAME_URL, f"ws://localhost:{agent_port}"]) if agent_port else "null"
    return (PAGE_CLOCK if clock else "") + SOCKET_HOOK % redirect


FRAMES_JS = """n => new Promise(done => { let i = 0;
  const step = () => (++i >= n ? done() : requestAnimationFrame(step)); requestAnimationFrame(step); })"""
"""Godot's main loop runs on requestAnimationFrame: after n of them the game has run n - 1 frames."""


class StepTimeout(RunnerError):
    pass


@dataclass
class Recorder:
    """The event log with a clock and a way to wait for what comes next."""

    log: EventLog
    store: ImageStore
    t0: float = field(default_factory=time.monotonic)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    sockets: int = 0

    def now(self) -> float:
        return round(time.monotonic() - self.t0, 3)

    def add(self, event: Event) -> Event:
        self.log.add(event)
        self.changed.set()
        return event

    def note(self, src: Source, kind: str, **msg: Any) -> Event:
        return self.add(Event(self.now(), src, kind, msg=msg))

    @property
    def cursor(self) -> int:
        return len(self.log.events)

    async def until(self, match: Callable[[Event], bool], since: int, timeout: float, what: str) -> Event:
        """The first event from index ``since`` on that ``match``es; StepTimeout naming ``what``
        after ``timeout`` seconds."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        cursor = since
        while True:
            self.changed.clear()
            events = self.log.events
            while cursor < len(events):
                cursor += 1
                if match(events[cursor - 1]):
                    return events[cursor - 1]
            left = end - loop.time()
            if left <= 0:
                raise StepTimeout(f"waited {timeout:.0f} s for {what}")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), left)

    def on_page(self, page: Any) -> None:
        page.on("console", lambda msg: self.add(Event(self.now(), "console", msg.type, text=msg.text[:2000])))
        page.on("pageerror", lambda exc: self.add(Event(self.now(), "console", "pageerror",
                                                         text=f"Uncaught {exc}"[:2000])))
        page.on("websocket", self._on_socket)

    def _on_socket(self, socket: Any) -> None:
        self.sockets += 1
        ws = self.sockets
        self.note("runner", "socket", url=socket.url, ws=ws)
        socket.on("framesent", lambda payload: self.add(frame_event(self.now(), "game", payload, ws, self.store)))
        socket.on("framereceived",
                  lambda payload: self.add(frame_event(self.now(), "agent", payload, ws, self.store)))
        socket.on("close", lambda _s: self.note("runner", "socket closed", ws=ws))


@contextlib.asynccontextmanager
async def chromium(chromium_path: Path = CHROMIUM, agent_port: int | None = None,
                   clock: bool = False) -> AsyncIterator[Any]:
    """A Playwright browser context on the system Chromium at 1920 x 1080 with software WebGL (with
    ``clock``, its pages keep :data:`PAGE_CLOCK`'s marks)."""
    try:
        from playwright.async_api import async_playwright
    except ImportError as exc:
        raise RunnerError("Playwright is missing: pip install -e '.[dev]' (it drives the system Chromium; "
                          "never run 'playwright install')") from exc
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=str(chromium_path), headless=True, args=CHROMIUM_ARGS)
        try:
            context = await browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
            await context.add_init_script(socket_hook(agent_port, clock))
            yield context
        finally:
            await browser.close()


async def frames(page: Any, n: int = 3, timeout: float = 30.0) -> None:
    """Let the game run ``n - 1`` frames (bounded)."""
    try:
        await asyncio.wait_for(page.evaluate(FRAMES_JS, n), timeout)
    except TimeoutError as exc:
        raise StepTimeout(f"the page drew no {n} frames in {timeout:.0f} s") from exc
