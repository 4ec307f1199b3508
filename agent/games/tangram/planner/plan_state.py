"""The offline planner's memory of one session: its figure, anchor and what the partner asked for."""

from __future__ import annotations

from dataclasses import dataclass, field

from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.planner.anchor import Anchor
from agent.games.tangram.planner.library import Figure


@dataclass
class Pending:
    """A move the human asked for, done on our next turn."""

    kind: str  # "move" | "rotate" | "place" | "restore"
    piece: str
    dx: float = 0.0
    dy: float = 0.0
    degrees: float = 0.0
    direction: str = ""
    relation: str = ""
    """For "place": the geometry engine's relation to ``anchor``; ``direction`` holds its words."""
    anchor: str = ""
    pose: Pose | None = None
    """For "restore": where the piece was before the agent's last move of it."""


@dataclass
class PlanState:
    objective: str | None = None
    figure: Figure | None = None
    exact: bool = True
    announced: bool = False
    anchor: Anchor | None = None
    around_said: bool = False
    pins: dict[str, str] = field(default_factory=dict)
    overrides: dict[str, Pose] = field(default_factory=dict)
    ours: dict[str, Pose] = field(default_factory=dict)
    pending: Pending | None = None
    queued: list[Pending] = field(default_factory=list)
    """Changes asked in the same line as ``pending`` ("turn blue and move brown left"): one a turn,
    after it."""
    after_place: Pending | None = None
    """A move or turn asked of a piece still in the drawer: it becomes ``pending`` once the piece
    is on the board (the planner places it first, as ``first``)."""
    first: str | None = None
    """A piece the human asked us to place next."""
    keep_human: bool = False
    """The human asked us not to move their pieces: kept for the rest of the game."""
    frozen: set[str] = field(default_factory=set)
    """Pieces the human asked us to leave where they are (on the board or in the drawer)."""
    size_first: str = ""
    """"big" or "small": the partner's strategy for which pieces come first, kept for the game."""
    lang: str = "en"
    """The language of the partner's last chat line: the planner's lines are in it."""
    last_line: str = ""
    skip_turns: int = 0
    turns: int = 0
    last_piece: str | None = None
    last_from: Pose | None = None
    """Where the agent's last piece (``last_piece``) was before its last move: None when it came from
    the drawer (the game takes no piece back to the drawer)."""
    asked_done: Pending | None = None
    """The partner's last "put X next to Y" the agent carried out, for a correction of it."""
    offer: Figure | None = None
    """Another figure the agent asked the partner about; a "yes" switches to it."""
    announced_pose: Pose | None = None
    """This turn's move, already announced in the chat: a chat answered before the game shows it
    speaks of it as made."""
    switched: bool = False
    """The partner asked for another figure than the game's objective and was told it is built."""
    movers: dict[str, str] = field(default_factory=dict)
    """Who moved each piece last ("agent"/"partner"), newest last, when the session tracks it."""
