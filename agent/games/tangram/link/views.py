"""The player's view of a game frame: the state, the memory and the two images prepared for the LLM.

The images are decoded, checked, downscaled and re-encoded in worker threads (the process's image
pool), both at once, so a turn waits for the slower one, not for the sum; a broken image is left
out with a log line and an ``image_error`` record.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import Any

from PIL import Image

from agent.core.images import ImageError, ImagePool
from agent.core.memory import Memory
from agent.core.transcript import Transcript
from agent.games.tangram.config import Config
from agent.games.tangram.contract import Player, TurnView
from agent.games.tangram.link.movers import Movers
from agent.games.tangram.pictures.repaint import Which, prepare_picture
from agent.games.tangram.protocol import GameFrame, GameState

log = logging.getLogger(__name__)


class Views:
    """Builds views for one session's player."""

    def __init__(self, config: Config, player: Player, memory: Memory, peer: str) -> None:
        self.config = config
        self.player = player
        self.memory = memory
        self.peer = peer
        self.transcript: Transcript | None = None
        self.images: ImagePool | None = None
        """The process's image decoding threads (the server sets it); None: the default thread pool."""
        self.movers: Movers | None = None
        """The session's ledger of who moved each piece last (the session sets it)."""
        self._recent: dict[tuple[Any, ...], asyncio.Future[Any]] = {}
        """The latest preparation of each picture, by what it is made of: a chat during the AI's turn
        carries the board its playRequest carried, and shares that preparation (finished or under
        way) instead of queueing the same work in the process's image pool behind other games."""
        self._running: set[asyncio.Future[Any]] = set()
        """Every preparation not done yet, also those no longer the latest: :meth:`close` stops them."""

    async def view(self, frame: GameFrame, *, drawer: bool = True, decide_by: float | None = None,
                   lazy_images: bool = False) -> TurnView:
        """The player's view of ``frame``. ``lazy_images``: return at once, the images still being
        prepared (``view.with_images()`` waits for them); the caller cancels them if unused."""
        cfg = self.config.images
        looks = self.player.uses_images  # the planner reads the state, not pictures
        wanted = {"board": looks and cfg.send_board and frame.board_img,
                  "drawer": looks and drawer and cfg.send_drawer and frame.drawer_img}
        mime = "image/png" if cfg.format == "png" else "image/jpeg"
        pending = asyncio.ensure_future(self._prepare_both(wanted, frame.state))
        view = TurnView(objective=frame.objective, state=frame.state, memory=self.memory, image_mime=mime,
                        message=frame.message, decide_by=decide_by, pending_images=pending,
                        movers=self.movers.snapshot() if self.movers is not None else {},
                        landing=self.movers.landing() if self.movers is not None else {})
        return view if lazy_images else await view.with_images()

    async def close(self) -> None:
        """Stop every picture still being prepared (a chat or turn cancelled mid-way leaves its
        shared preparation behind): nothing of the session is left running after it ends."""
        self._recent = {}
        for task in list(self._running):
            await drop(task)

    async def _prepare_both(self, wanted: dict[str, Any], state: GameState) -> tuple[Any, bytes | None]:
        board, drawer = wanted["board"], wanted["drawer"]
        # A player that draws marks on the board encodes it once, marks included: not here too.
        encode_board = not self.player.marks_board
        got = await asyncio.gather(self._prepare("board", str(board), state, encode_board) if board else _nothing(),
                                   self._prepare("drawer", str(drawer), state) if drawer else _nothing())
        return got[0], got[1]

    async def _prepare(self, key: Which, b64: str, state: GameState, encode: bool = True) -> Any:
        """One image as the LLM gets it (bytes; with ``encode=False`` the pixels when they need
        encoding, a copy of their own for each caller to draw on), or None (recorded) when it is
        broken. The same picture of the same state is prepared once."""
        made_of = (key, b64, encode, state.model_dump_json())
        task = self._recent.get(made_of)
        if task is None or task.cancelled():
            task = asyncio.ensure_future(self._prepare_new(key, b64, state, encode))
            self._running.add(task)
            task.add_done_callback(self._running.discard)
            self._recent = {k: v for k, v in self._recent.items() if k[0] != key}  # the latest of each only
            self._recent[made_of] = task
        got = await asyncio.shield(task)
        return got.copy() if isinstance(got, Image.Image) else got

    async def _prepare_new(self, key: Which, b64: str, state: GameState, encode: bool) -> Any:
        """:meth:`_prepare`'s work: its pieces shown in their own colours as ``images.source`` says
        (:mod:`agent.games.tangram.pictures.repaint`)."""
        job = functools.partial(prepare_picture, b64, state, key, self.config.images, encode)
        try:
            image = await (self.images.run(job) if self.images is not None else asyncio.to_thread(job))
        except Exception as exc:  # ImageError, or whatever else a hostile PNG makes Pillow raise
            reason = str(exc) if isinstance(exc, ImageError) else f"broken image ({type(exc).__name__})"
            log.warning("%s: %s image left out: %s", self.peer, key, reason)
            if self.transcript is not None:
                self.transcript.record("image_error", image=key, reason=reason)
            return None
        return image.pixels if image.pixels is not None else image.data


async def _nothing() -> None:
    return None


async def drop(task: asyncio.Future[Any] | None) -> None:
    """Cancel ``task`` if it is still running and wait until it has stopped (a worker thread it
    waits on finishes on its own; nothing of the task is left behind)."""
    if task is not None and not task.done():
        task.cancel()
        await asyncio.wait({task})
