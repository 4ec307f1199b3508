"""The contract between a session and whatever decides its moves: the one place that says what
the session expects of a player.

A session builds a :class:`TurnView` from each game frame and asks its player. The player answers
with a :class:`Decision` (a pose in the game's own terms, or a pass, plus one chat line), or a
chat reply. One player object lives per session, so it may keep its own plan between turns.
Players never send frames and never see the socket: the session validates, repairs and sends.

Every player subclasses :class:`Player`. Its optional capabilities (``uses_images``,
``marks_board``, ``supervisor``, ``aclose``) are declared there with their defaults, so the session
reads them as plain attributes and never asks whether a player has one. What the LLM player asks of
its helping planner (``suggest``, ``promised``, its figure library) is the planner player's own
class, which the LLM player is given by type.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from agent.core.memory import Memory
from agent.games.tangram.geometry.frames import Pose, pose_from_marker, start_pose
from agent.games.tangram.geometry.pieces import PIECE_NAMES
from agent.games.tangram.protocol import GameFrame, GameState


@dataclass(frozen=True, slots=True)
class Decision:
    pose: Pose | None
    """Where to put which piece (node origin, board units); None passes the turn."""
    chat: str
    """One short line for the game's chat saying what the agent does and why."""
    reasoning: str = ""
    """Longer thinking for the transcript; never shown in the game."""
    source: str = ""
    """Who decided: "llm", "planner", "fallback"."""
    candidate: str | None = None
    """The letter of the checked candidate the LLM named (played exactly as offered); None for its own move."""
    image_layers: tuple[str, ...] = ()
    """The marks drawn on the board image the LLM saw for this decision (grid, labels, candidates)."""
    images: tuple[bytes, ...] = ()
    """The images exactly as the LLM saw them (board first), for the console and the simulator's report;
    never written to the transcript."""


@dataclass
class TurnView:
    """Everything a player may look at for one decision."""

    objective: str
    state: GameState
    memory: Memory
    board_png: bytes | None = None
    drawer_png: bytes | None = None
    """Images as prepared for the LLM (downscaled, re-encoded), or None when absent or broken."""
    board_pixels: Any = None
    """The board picture checked and downscaled but not encoded (a PIL image), when the player said
    it draws marks on it (``marks_board``): it is encoded once, marks included; ``board_png`` is
    then empty."""
    image_mime: str = "image/png"
    message: str = ""
    """The player's chat line, for chat requests."""
    collisions: list[str] = field(default_factory=list)
    """For adjustments: what the game reported our last play collides with."""
    previous: Decision | None = None
    """For adjustments: the decision the game just reported on."""
    attempt: int = 0
    decide_by: float | None = None
    """Event-loop time by which a player should have decided, leaving the session time for a
    fallback and the game's feedback before the turn's deadline; None for chat."""
    movers: Mapping[str, str] = field(default_factory=dict)
    """Who moved each piece on the board last ("agent" or "partner"), newest move last
    (:mod:`agent.games.tangram.link.movers`); empty when the session does not track it."""
    landing: Mapping[str, Pose] = field(default_factory=dict)
    """The agent's plays sent but not yet on this frame's board (a chat answered while a play lands)."""
    pending_images: asyncio.Future[tuple[Any, bytes | None]] | None = None
    """Board and drawer images still being prepared when the session handed over the view, so a
    player can do its own preparation meanwhile; :meth:`with_images` waits for them."""

    def board(self) -> dict[str, Pose]:
        return board_of(self.state)

    def board_with_landing(self) -> tuple[dict[str, Pose], dict[str, str]]:
        """The board with the agent's plays on their way counted as made (a chat answered while a play
        lands: the line that announced it has gone out already), and who moved each of its pieces last."""
        return {**self.board(), **self.landing}, {**self.movers, **dict.fromkeys(self.landing, "agent")}

    async def with_images(self) -> TurnView:
        """This view with its images ready (itself when they already are)."""
        if self.pending_images is None:
            return self
        board, drawer = await self.pending_images
        if board is not None and not isinstance(board, bytes):  # pixels left for the marks to encode
            return replace(self, board_png=b"", board_pixels=board, drawer_png=drawer, pending_images=None)
        return replace(self, board_png=board, drawer_png=drawer, pending_images=None)


def board_of(state: GameState) -> dict[str, Pose]:
    """On-board pieces as exact poses (node origins), rebuilt from the reported markers."""
    return {name: pose_from_marker(name, p.position[0], p.position[1], p.rotation)
            for name, p in state.on_board.items()}


def drawer_of(state: GameState) -> dict[str, Pose]:
    """Pieces off the board, where the drawer shows them: their start place, at the reported rotation."""
    out = {}
    for name in PIECE_NAMES:
        if name in state.on_board:
            continue
        pose = start_pose(name)
        off = state.off_board.get(name)
        out[name] = Pose(name, pose.x, pose.y, off.rotation if off is not None else pose.rotation)
    return out


class SessionLine(Protocol):
    """What someone watching a session (the experimenter console) may use of it: who it is, and its
    chat. The session hands itself over as this, and nothing more of it."""

    @property
    def peer(self) -> str: ...

    @property
    def player_name(self) -> str: ...

    async def say(self, text: str) -> bool:
        """Send one chat line now, as the agent's (the console's experimenter writing); False when the
        session is closed or the line is empty."""
        ...


class Supervisor(Protocol):
    """Someone watching the session who may step in: the experimenter console.

    It comes with the player (as :attr:`Player.supervisor`), because the server builds a session from a
    player source alone. Reviews of moves and chat lines happen inside the player's own calls and
    are bounded by the view's ``decide_by``, so the session's timing rules hold unchanged; the
    session only tells the supervisor that it exists and what each frame brought.
    """

    def attach(self, session: SessionLine) -> None:
        """The session is built (the supervisor reads its transcript as a listener already)."""
        ...

    def frame_in(self, frame: GameFrame) -> None:
        """A readable frame arrived, images as the game sent them. Never blocks."""
        ...


class Player(ABC):
    """What the session expects of a player. Subclass it: the optional capabilities have their defaults here."""

    name: str
    """Who decides, for logs, the transcript and the console ("llm", "planner", ...)."""
    uses_images: bool = True
    """False lets the session skip decoding images nobody looks at (the planner reads the state)."""
    marks_board: bool = False
    """True: the player draws marks on the board picture and encodes it itself, so the session hands it
    the checked pixels (``TurnView.board_pixels``) instead of encoding the board too."""
    supervisor: Supervisor | None = None
    """The console watching this player's session, when there is one."""

    @abstractmethod
    async def play(self, view: TurnView) -> Decision:
        """Choose this turn's move."""

    @abstractmethod
    async def adjust(self, view: TurnView) -> Decision:
        """The game reported ``view.collisions`` for ``view.previous``: choose a corrected move."""

    @abstractmethod
    async def chat(self, view: TurnView) -> str:
        """Reply to ``view.message``."""

    async def aclose(self) -> None:
        """The session ended: release what the player holds (its HTTP client, its helpers). Nothing by default."""
        return
