"""Forge's side of the wire: POSTs requests like either client version and reads answers like it.

Two versions (FORGE_FACTS):

* ``early``: a 30 s time-out, no retry; a non-200 answer, a time-out or a refused connection is an
  error and Forge's own AI decides.
* ``later``: 10 min connect/read time-out; on any I/O error (non-200, time-out, refused) the same
  request is sent again every 5 s, for ever. The fake stops after ``max_retries`` and reports it,
  since a test must end; a non-JSON body is the uncaught parse error that ends the game ("fatal").

Time-outs and the retry interval can be scaled down for tests, keeping their ratio to the agent's
decision deadline the point of the test, not the wall-clock wait.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from agent.games.forge.fake.checks import Verdict, read_answer
from agent.games.forge.fake.engine import Game


@dataclass(frozen=True)
class ClientVersion:
    name: str
    timeout: float
    retry_interval: float | None
    """Seconds between re-sends after an I/O error; None = no retry."""


EARLY = ClientVersion("early", timeout=30.0, retry_interval=None)
LATER = ClientVersion("later", timeout=600.0, retry_interval=5.0)
VERSIONS = {"early": EARLY, "later": LATER}


@dataclass
class Exchange:
    request: dict[str, Any]
    status: int | None
    body: bytes
    latency_s: float
    attempts: int
    verdict: Verdict

    @property
    def kind(self) -> str:
        return str(self.request.get("requestType"))


@dataclass
class Report:
    exchanges: list[Exchange] = field(default_factory=list)
    results: list[str] = field(default_factory=list)
    """Winners of played games."""

    def outcomes(self) -> Counter[str]:
        return Counter(e.verdict.outcome for e in self.exchanges if e.kind != "reflect")

    @property
    def decisions(self) -> list[Exchange]:
        return [e for e in self.exchanges if e.kind != "reflect"]

    @property
    def valid_share(self) -> float:
        d = self.decisions
        return sum(e.verdict.valid for e in d) / len(d) if d else 1.0

    def invalid(self) -> list[Exchange]:
        return [e for e in self.decisions if not e.verdict.valid]

    def latencies(self) -> list[float]:
        return [e.latency_s for e in self.decisions]


class FakeForge:
    """One Forge client talking to the agent at ``url``; share it between games like Forge would."""

    def __init__(self, url: str, version: str | ClientVersion = "later", *, token: str | None = None,
                 timeout: float | None = None, retry_interval: float | None = None, max_retries: int = 3,
                 caller: str = "ai-fallback") -> None:
        if caller not in ("ai-fallback", "headless"):
            raise ValueError(f"unknown caller {caller!r}")
        self.url = url
        self.caller = caller
        """What an error leads to: Forge's own AI decides ("ai-fallback"), or the headless caller
        waits for manual input on its port 8081, which hangs the game ("headless")."""
        self.version = VERSIONS[version] if isinstance(version, str) else version
        self.timeout = timeout if timeout is not None else self.version.timeout
        self.retry_interval = retry_interval if retry_interval is not None else self.version.retry_interval
        self.max_retries = max_retries
        self.token = token
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> FakeForge:
        self._session = aiohttp.ClientSession()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._session is not None:
            await self._session.close()

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    async def _post_once(self, payload: bytes) -> tuple[int | None, bytes, str]:
        assert self._session is not None, "use 'async with FakeForge(...)'"
        try:
            timeout = aiohttp.ClientTimeout(total=self.timeout)
            async with self._session.post(self.url, data=payload, headers=self._headers(), timeout=timeout) as resp:
                return resp.status, await resp.read(), ""
        except TimeoutError:
            return None, b"", f"timed out after {self.timeout:g}s"
        except aiohttp.ClientError as exc:
            return None, b"", f"I/O error: {type(exc).__name__}"

    async def send(self, request: dict[str, Any]) -> Exchange:
        """One request as Forge sends it (pretty-printed JSON), with the version's retries."""
        payload = json.dumps(request, indent=2).encode()
        started = time.monotonic()
        attempts = 0
        while True:
            attempts += 1
            status, body, problem = await self._post_once(payload)
            io_error = status is None or status != 200
            if not io_error or self.retry_interval is None or attempts > self.max_retries:
                break
            await asyncio.sleep(self.retry_interval)
        latency = time.monotonic() - started
        if status is None:
            forever = "; the later client would retry for ever" if self.retry_interval else ""
            verdict = Verdict("error", problem + forever)
        else:
            verdict = read_answer(request, status, body, self.version.name)
            if status != 200 and self.retry_interval is not None:
                verdict.reason += f" after {attempts} attempts; the later client would retry for ever"
        return Exchange(request, status, body, latency, attempts, verdict)

    async def health(self) -> int | None:
        assert self._session is not None
        try:
            async with self._session.post(self.url, json={"healthCheck": True}, headers=self._headers(),
                                          timeout=aiohttp.ClientTimeout(total=self.timeout)) as resp:
                return resp.status
        except (TimeoutError, aiohttp.ClientError):
            return None

    async def play(self, game: Game, report: Report | None = None) -> Report:
        """A whole game, every request sent and every answer applied as Forge reads it."""
        report = report or Report()

        async def ask(request: dict[str, Any]) -> dict[str, Any] | None:
            exchange = await self.send(request)
            report.exchanges.append(exchange)
            if exchange.verdict.outcome == "fatal":
                raise FatalAnswer(exchange.verdict.reason)
            if exchange.verdict.outcome == "error" and self.caller == "headless":
                raise FatalAnswer(f"{exchange.verdict.reason}: waiting for manual input on port 8081 (game hangs)")
            return exchange.verdict.decision if exchange.verdict.outcome in ("ok", "changed") else None

        try:
            winner = await game.play(ask)
        except FatalAnswer as exc:
            winner = "crashed" if "8081" not in str(exc) else "hung"
        report.results.append(winner)
        report.exchanges.append(await self.send(game.reflect_request()))
        return report

    async def replay(self, requests: list[dict[str, Any]], report: Report | None = None) -> Report:
        report = report or Report()
        for request in requests:
            report.exchanges.append(await self.send(request))
        return report


class FatalAnswer(Exception):
    """The later client's uncaught parse error: the game ends."""
