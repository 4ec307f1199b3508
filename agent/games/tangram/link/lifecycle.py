"""One way from a connection to a session, for every tangram game: loopback, in-lab study, online.

```python
seat = await prepare_seat(config)        # once per condition, at start-up
binding = Binding.of(seat)               # or a binder's: which condition, tags, folder, meter
await host.serve(binding, binder, connection, frames, peer)
```

:meth:`SessionHost.serve` is the lifecycle, the same for every connection (as httpx sends every
request through one ``send``, over thin transports):

| step | who |
|---|---|
| the condition's player factory, metadata and turn lines | :func:`prepare_seat`, once per condition (the one place) |
| which seat this connection plays, its tags, folder and meter | the binder's ``bind`` (what differs) |
| the transcript | :func:`agent.core.transcript.transcript_for` (the one place), watched by the meter |
| the game recorded before its first frame is answered | :meth:`Binder.started` (a study's; may refuse) |
| the session | :meth:`SessionHost.session` (the one ``Session(...)``) |
| the frames until the transport says the connection ended | :meth:`Session.run` |
| what the server saw (turns ended, a turn running) | :class:`Outcome`, read before the session closes |
| the end judged, into the transcript | :meth:`Binder.closing` (a study's verdict) |
| the end recorded | :meth:`Binder.ended`, once the session is closed |

The binders say only what differs: :class:`Fixed` (one config, ``python -m agent``), the study's
(link/study.py: the active participant's next condition, judged at the end) and the online study's
(online/sockets.py: the ticket's participant, spend caps, every AI turn counted). A transport
(link/server.py's websockets, online/sockets.py's aiohttp) reads frames and says why they ended
(:class:`Frames`); nothing else of it reaches the session.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from agent.core.images import ImagePool
from agent.core.redact import Secrets
from agent.core.studies.metadata import study_metadata
from agent.core.studies.spend import GameSpend
from agent.core.transcript import Transcript, transcript_for
from agent.games.tangram.config import Config
from agent.games.tangram.link.factory import PlayerFactory, PlayerSource, make_player_factory
from agent.games.tangram.link.session import Session
from agent.games.tangram.turn.lines import turn_lines
from agent.games.tangram.turn.state import TurnLines
from agent.games.tangram.turn.thinking import thinking_lines

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Seat:
    """What one condition's sessions are made of (a plain run is one condition), prepared once."""

    name: str
    config: Config
    factory: PlayerFactory | None
    """None: a player source given as it is (tests, embedding)."""
    players: PlayerSource
    """The factory, or the console's wrapping of it."""
    metadata: dict[str, Any]
    """The condition's ``study_metadata`` (version, config and template hashes) for session_start."""
    thinking: Mapping[str, str] | None
    """The "thinking" line by language; None when off."""
    lines: TurnLines

    def supervised(self, wrap: Callable[[PlayerSource, Config], PlayerSource]) -> Seat:
        """This seat with its players given through ``wrap`` (the experimenter console's)."""
        return dataclasses.replace(self, players=wrap(self.factory or self.players, self.config))


async def prepare_seat(config: Config, name: str = "", *, with_client: bool = True) -> Seat:
    """The one place a condition is prepared: its player factory (the LLM client, checked prompts,
    the figure library), its metadata (hashing every template file: in a thread) and its turn lines."""
    factory = make_player_factory(config, with_client=with_client)
    try:
        metadata = await asyncio.to_thread(study_metadata, config, config.prompts_dir)
    except BaseException:
        await factory.aclose()
        raise
    return Seat(name, config, factory, factory, metadata, thinking_lines(config), turn_lines(config))


@dataclass
class Binding:
    """What one connection's session plays: its binder's answer."""

    seat: Seat
    config: Config
    """The seat's config as this game plays it (tagged participant, condition, order; or the planner)."""
    players: PlayerSource
    metadata: dict[str, Any]
    """What session_start records besides the peer and the player."""
    folder: Path | None = None
    """Where the transcript goes (a study's folder); None: the config's transcripts.dir."""
    spend: GameSpend | None = None
    """The game's LLM spend (an online study's), priced from its transcript."""
    on_turn_ended: Callable[[int], None] | None = None
    notes: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """Records the transcript gets once it is open (why a spend cap has the planner play)."""
    context: Any = None
    """The binder's own (a study's started game); the lifecycle never reads it."""

    @classmethod
    def of(cls, seat: Seat, **fields: Any) -> Binding:
        """A seat as it is (its config, players and metadata), with ``fields`` changed."""
        return dataclasses.replace(cls(seat, seat.config, seat.players, dict(seat.metadata)), **fields)


@dataclass(frozen=True)
class Outcome:
    """What the server saw of a session, read before it closes (what a study judges)."""

    reason: str
    spoke: bool
    """The connection sent a frame."""
    by_game: bool
    """The game closed the connection (not the agent stopping)."""
    failed: bool
    """The session ended on an error of the agent's own."""
    ai_turn_running: bool
    ai_turns_ended: int


class Frames(Protocol):
    """A connection's frames, from its transport, and why they ended."""

    reason: str
    """Why the frames ended, once they have (a close code, a frame too large)."""

    async def ready(self) -> bool:
        """Wait for the first frame (the game's socket costs no transcript file until then); False
        when the connection closed before it."""
        ...

    def __aiter__(self) -> AsyncIterator[str | bytes]: ...


class Binder(Protocol):
    """What differs between the kinds of connection, beyond the binding itself."""

    async def started(self, binding: Binding, transcript: Transcript) -> bool:
        """The session is about to be made (its transcript exists, not yet open): record it; False
        refuses the connection (the binder has closed it)."""
        ...

    async def connected(self, binding: Binding, session: Session) -> None:
        """The session is made and its transcript open (a log line)."""
        ...

    def closing(self, binding: Binding, session: Session, outcome: Outcome) -> None:
        """The session is about to close: the last records its transcript takes (a study's verdict)."""
        ...

    async def ended(self, binding: Binding, session: Session, outcome: Outcome) -> None:
        """The session is closed: record the end."""
        ...


class Fixed:
    """The binder of ``python -m agent``: every connection plays the one config, and nothing is recorded
    beyond the transcript."""

    async def started(self, binding: Binding, transcript: Transcript) -> bool:
        return True

    async def connected(self, binding: Binding, session: Session) -> None:
        log.info("game connected from %s (session %s)", session.peer, session.transcript.session_id)

    def closing(self, binding: Binding, session: Session, outcome: Outcome) -> None:
        pass

    async def ended(self, binding: Binding, session: Session, outcome: Outcome) -> None:
        if outcome.spoke:
            log.info("game from %s left (session %s: %s)", session.peer, session.transcript.session_id,
                     outcome.reason)
        else:
            log.debug("connection from %s closed before its first frame (%s)", session.peer, outcome.reason)


@dataclass
class SessionHost:
    """What every session of one server shares, and the lifecycle each connection goes through."""

    secrets: Secrets = field(default_factory=Secrets)
    images: ImagePool | None = None
    sessions: set[Session] = field(default_factory=set)
    stopping: bool = False
    """The server is stopping: a connection that ends now was not ended by its game."""
    on_transcript: Callable[[Path], None] | None = None
    """Told each transcript file opened (the server remembers the latest)."""

    def session(self, binding: Binding, connection: Any, transcript: Transcript, peer: str) -> Session:
        """The one place a session is made."""
        seat = binding.seat
        session = Session(binding.config, connection, binding.players(transcript), transcript, peer=peer,
                          study=binding.metadata, thinking=seat.thinking, lines=seat.lines,
                          on_turn_ended=binding.on_turn_ended)
        session.images = self.images
        return session

    async def serve(self, binding: Binding, binder: Binder, connection: Any, frames: Frames, peer: str) -> None:
        """One connection's whole life as a session (the module's table)."""
        transcript = transcript_for(binding.config, self.secrets, folder=binding.folder)
        if binding.spend is not None:
            binding.spend.watch(transcript)
        if not await binder.started(binding, transcript):
            return
        session = self.session(binding, connection, transcript, peer)
        self.sessions.add(session)
        outcome: Outcome | None = None
        spoke = False
        try:
            spoke = await frames.ready()
            if spoke:
                await self.open_transcript(transcript)
                for kind, data in binding.notes:
                    transcript.record(kind, **data)
                await binder.connected(binding, session)
                await session.run(frames)
            outcome = self._outcome(session, frames.reason, spoke, failed=False)
        except Exception:  # one session must never take the server down
            log.exception("session %s failed", transcript.session_id)
            outcome = self._outcome(session, "internal error", spoke, failed=True)
        finally:
            if outcome is None:  # cancelled: the agent is stopping
                outcome = self._outcome(session, "agent stopped", spoke, failed=False)
            try:
                binder.closing(binding, session, outcome)
                await session.close(outcome.reason)
            finally:
                self.sessions.discard(session)
                await binder.ended(binding, session, outcome)

    def _outcome(self, session: Session, reason: str, spoke: bool, failed: bool) -> Outcome:
        return Outcome(reason, spoke, by_game=not self.stopping and not failed, failed=failed,
                       ai_turn_running=session.machine.busy, ai_turns_ended=session.stats["turns_ended"])

    async def open_transcript(self, transcript: Transcript) -> None:
        """Open the file; one that cannot be written costs the game nothing but its record."""
        path = transcript.path
        try:
            await transcript.open()
        except OSError as exc:  # an unwritable folder (or no descriptor left) must not cost the game
            log.error("cannot write the transcript %s (%s); this session runs without one", path,
                      exc.strerror or exc)
            return
        if path is not None and self.on_transcript is not None:
            self.on_transcript(path)

    async def shutdown(self) -> None:
        """Polite stop: running turns end with finish (the sockets still work)."""
        self.stopping = True
        await asyncio.gather(*(s.close("server shutdown", polite=True) for s in list(self.sessions)),
                             return_exceptions=True)
