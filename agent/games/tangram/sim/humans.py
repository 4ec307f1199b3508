"""Scripted human partners, deterministic for a given seed and board.

Each human decides, on its turn, one move (or none) and what to say: some lines before the AI's
turn starts (waiting for the reply) and some sent while the AI's turn is running. All choices
come from one ``random.Random`` seeded with the seed, so the same seed on the same board makes
the same choices.

Kinds:

* ``passive``: never moves, never talks.
* ``random``: one random valid move per turn (a drop the game accepts: no overlap, inside).
* ``cooperative``: builds toward the target figure when the objective has one (places the next
  missing piece of the figure where the figure has it); otherwise keeps the pieces together,
  putting a new piece next to those already on the board.
* ``chatty``: moves like ``random`` and talks: often before the AI's turn, sometimes during it.
* ``requesting``: builds like ``cooperative`` and makes the requests people make of a partner, in
  English or Portuguese (by seed): "don't move my pieces", "start with the big ones", "turn the
  square", "leave Red where it is", "let me do the next one", "I'll do the floor"; on each of its
  later turns it checks the agent kept them (its own pieces where it left them, the biggest piece
  left placed next, the square turned, Red not moved again, no play on the turn it took, the floor
  left to it) and notes each broken promise in :attr:`ScriptedHuman.broken`.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from shapely.geometry import Polygon
from shapely.prepared import prep

from agent.games.tangram.geometry.collide import BOARD_PX, polygon_px
from agent.games.tangram.geometry.frames import Pose, rotation_distance
from agent.games.tangram.geometry.pieces import PIECE_NAMES, PIECES
from agent.games.tangram.sim.figure import target_poses
from agent.games.tangram.sim.simgame import SimGame

HUMAN_KINDS = ("passive", "random", "cooperative", "chatty", "requesting")
ROTATIONS = tuple(float(r) for r in range(0, 360, 45))
"""A right-click turns a piece by 45 degrees, and 360 wraps to 0."""
SAMPLES = 160
"""Candidate drops tried per move; plenty on a board that is far from full."""

Move = tuple[str, float, float, float]

CHAT_LINES = (
    "Hi! What should we build first?",
    "Can you put a big triangle at the top?",
    "I think the square would look good in the middle.",
    "Why did you move that piece?",
    "Let's make it a bit taller.",
    "Could you use the blue piece next?",
    "That looks nice, keep going!",
    "Maybe rotate it 45 degrees?",
    "What are you planning to do next?",
    "Please don't move my pieces.",
    "Do you think it looks like the objective yet?",
    "Olá! Podes ajudar-me com o telhado?",
)


@dataclass
class ScriptedHuman:
    kind: str
    seed: int | str = 0
    objective: str = ""
    rng: random.Random = field(init=False)
    chat_before_p: float = 0.0
    chat_during_p: float = 0.0
    broken: list[str] = field(default_factory=list)
    """Promises and constraints the agent broke, as this partner saw them (``requesting`` only)."""

    def __post_init__(self) -> None:
        # A string seed is hashed with SHA-512 by random.Random: stable across runs and platforms.
        self.rng = random.Random(f"{self.kind}:{self.seed}")

    # -- moves

    def choose_move(self, game: SimGame) -> Move | None:
        return None

    def _random_move(self, game: SimGame) -> Move | None:
        drops = _Drops(game)
        for _ in range(SAMPLES):
            move = self._sample(game)
            if drops.accepts(move):
                return move
        return None

    def _sample(self, game: SimGame, pieces: tuple[str, ...] = PIECE_NAMES) -> Move:
        piece = self.rng.choice(pieces)
        return (piece, round(self.rng.uniform(6, 94), 1), round(self.rng.uniform(6, 94), 1), self.rng.choice(ROTATIONS))

    # -- chat

    def chat_before(self, game: SimGame) -> list[str]:
        return [self.rng.choice(CHAT_LINES)] if self.chat_before_p and self.rng.random() < self.chat_before_p else []

    def chat_during(self, game: SimGame) -> list[str]:
        return [self.rng.choice(CHAT_LINES)] if self.chat_during_p and self.rng.random() < self.chat_during_p else []


class PassiveHuman(ScriptedHuman):
    pass


class RandomHuman(ScriptedHuman):
    def choose_move(self, game: SimGame) -> Move | None:
        return self._random_move(game)


class CooperativeHuman(ScriptedHuman):
    _targets: dict[str, Pose] | None = None
    _looked_up: bool = False
    _hands_off: frozenset[str] = frozenset()
    """Pieces this partner does not move (one it asked the agent to leave where it is)."""

    def choose_move(self, game: SimGame) -> Move | None:
        if not self._looked_up:  # once per game: matching may not be free
            self._targets, self._looked_up = target_poses(self.objective), True
        targets = self._targets
        if targets:
            move = self._toward_figure(game, targets)
            if move is not None:
                return move
        return self._compact_move(game)

    def _toward_figure(self, game: SimGame, targets: dict[str, Pose]) -> Move | None:
        """Place the next piece of the figure, shifted to where the figure is being built."""
        placed = game.on_board()
        dx, dy = _anchor(placed, targets)
        drops = _Drops(game)
        for name, goal in targets.items():
            if name in self._hands_off:
                continue
            gx, gy = goal.x + dx, goal.y + dy
            here = placed.get(name)
            if here is not None and math.dist((here.x, here.y), (gx, gy)) < 2.0 \
                    and rotation_distance(here.rotation, goal.rotation) < 1.0:
                continue  # already (about) where the figure wants it
            # The spot may be taken by the agent's work: try it, then small shifts.
            for sx, sy in ((0, 0), (2, 0), (-2, 0), (0, 2), (0, -2), (3, 3), (-3, -3), (3, -3), (-3, 3)):
                move = (name, round(gx + sx, 2), round(gy + sy, 2), goal.rotation)
                if drops.accepts(move):
                    return move
        return None

    def _compact_move(self, game: SimGame) -> Move | None:
        """Put a piece from the drawer next to what is on the board (or near the middle)."""
        placed = game.on_board()
        drawer = tuple(n for n in PIECE_NAMES if n not in placed and n not in self._hands_off) or tuple(
            n for n in PIECE_NAMES if n not in self._hands_off)
        if placed:
            cx = sum(p.centroid_board()[0] for p in placed.values()) / len(placed)
            cy = sum(p.centroid_board()[1] for p in placed.values()) / len(placed)
        else:
            cx, cy = 50.0, 50.0
        best: tuple[float, Move] | None = None
        drops = _Drops(game)
        for _ in range(SAMPLES):
            move = self._sample(game, drawer)
            if not drops.accepts(move):
                continue
            mx, my = Pose(*move).centroid_board()
            d = math.dist((mx, my), (cx, cy))
            if best is None or d < best[0]:
                best = (d, move)
        return best[1] if best else None


class ChattyHuman(RandomHuman):
    pass


_SIZE = {"large triangle": 4, "medium triangle": 2, "square": 2, "parallelogram": 2, "small triangle": 1}
"""Each kind's area in small triangles."""
_MOVED = 0.5
"""How far (board units, or degrees) a piece must be off to count as moved."""
REQUESTS = (
    ("keep_mine", ("please don't move my pieces", "não mexas nas minhas peças")),
    ("theirs_floor", ("I'll do the floor", "eu faço o chão")),
    ("pass_next", ("let me do the next one", "deixa-me fazer a próxima")),
    ("turn_brown", ("can you turn the brown one?", "roda o castanho")),
    ("biggest_next", ("let's start with the big ones", "vamos começar pelas peças grandes")),
    ("turn_square", ("can you rotate the square?", "podes rodar o quadrado?")),
    ("keep_red", ("leave the red one where it is", "deixa o vermelho onde está")),
)
"""The requests of the ``requesting`` partner, in order, one per turn, each in English and Portuguese."""
_TURNED = {"turn_square": "Purple", "turn_brown": "Brown"}
_THEIRS = {"theirs_floor": ("house", frozenset({"Green", "Yellow"}))}
"""A part the partner takes for themself, the figure it is asked on, and its pieces, never to be played by the agent."""
"""The piece each request to turn one names: still in the drawer, it is placed first, turned on the turn after."""


class RequestingHuman(CooperativeHuman):
    """A partner who asks for things and checks, on its later turns, that they were done."""

    _asked: int = 0
    _left: dict[str, Pose] | None = None
    """The board as this partner left it at the end of its last turn."""
    _mine: dict[str, Pose]
    _keep_mine: bool = False
    _keep: dict[str, Pose | None]
    _theirs: frozenset[str] = frozenset()
    """The pieces of a part this partner took for themself ("I'll do the floor")."""
    _expect: list[tuple[str, str]]
    """Checks due on this partner's next turn, with the piece they are about: ("biggest_next", ""),
    ("turn", piece), ("place", piece): a drawer piece asked to be turned is placed first, then turned
    on the turn after."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self._mine, self._keep, self._expect = {}, {}, []

    def chat_before(self, game: SimGame) -> list[str]:
        self._check(game)
        if self._asked >= len(REQUESTS):
            return []
        what, lines = REQUESTS[self._asked]
        self._asked += 1
        board = game.on_board()
        if what == "keep_mine":
            self._keep_mine = True
        elif what == "keep_red":
            self._keep["Red"] = board.get("Red")
            self._hands_off = self._hands_off | {"Red"}
        elif what in _THEIRS:
            figure, pieces = _THEIRS[what]
            if figure not in self.objective.lower():
                return self.chat_before(game)  # a part of another figure: not asked
            self._theirs = pieces
        elif what in _TURNED:
            piece = _TURNED[what]
            self._expect.append(("turn" if piece in board else "place", piece))
            self._mine.pop(piece, None)  # asking to turn it consents to its move
            self._hands_off = self._hands_off | {piece}  # and this partner leaves it to the agent
        else:
            self._expect.append((what, ""))
        return [self.rng.choice(lines)]

    def choose_move(self, game: SimGame) -> Move | None:
        move = super().choose_move(game)
        board = dict(game.on_board())
        if move is not None:
            self._mine[move[0]] = board[move[0]] = Pose(*move)
        self._left = board
        return move

    def _check(self, game: SimGame) -> None:
        """What the agent did since this partner's last turn, against what it was asked."""
        if self._left is None:
            return
        now, before = game.on_board(), self._left
        later: list[tuple[str, str]] = []
        if self._keep_mine:
            self.broken += [f"moved the partner's {p}" for p, pose in self._mine.items()
                            if p in now and _moved(now[p], pose)]
        for piece, pose in self._keep.items():
            if (pose is None) != (piece not in now) or (pose is not None and _moved(now[piece], pose)):
                self.broken.append(f"moved {piece}, asked to leave it")
        self.broken += [f"played {p}, of a part the partner took" for p in sorted(self._theirs)
                        if p in now and (p not in before or _moved(now[p], before[p]))]
        for expected, piece in self._expect:
            new = [p for p in now if p not in before]
            drawer = [p for p in PIECE_NAMES if p not in before]
            what = expected
            if what == "place" and piece in before:  # this partner placed it: the turn was due now
                what = "turn"
            elif what == "place":
                if piece in now:
                    later.append(("turn", piece))
                else:
                    self.broken.append(f"did not place {piece} from the drawer to turn it, as promised")
            if what == "biggest_next" and new and drawer:
                biggest = max(_SIZE[PIECES[p].kind] for p in drawer)
                if _SIZE[PIECES[new[0]].kind] != biggest:
                    self.broken.append(f"placed {new[0]} after 'big ones first' while a bigger piece was left")
            if what == "pass_next" and any(p not in before or _moved(now[p], before[p]) for p in now):
                self.broken.append("played after 'let me do the next one'")
            if what == "turn" and piece in now and piece in before \
                    and rotation_distance(now[piece].rotation, before[piece].rotation) < _MOVED:
                self.broken.append(f"did not turn {piece}")
        self._expect = later
        self._mine = {p: pose for p, pose in self._mine.items() if p in now and not _moved(now[p], pose)}


def _moved(a: Pose, b: Pose) -> bool:
    return math.dist((a.x, a.y), (b.x, b.y)) > _MOVED or rotation_distance(a.rotation, b.rotation) > _MOVED


def make_human(kind: str, seed: int | str = 0, objective: str = "") -> ScriptedHuman:
    if kind == "passive":
        return PassiveHuman(kind, seed, objective)
    if kind == "random":
        return RandomHuman(kind, seed, objective)
    if kind == "cooperative":
        return CooperativeHuman(kind, seed, objective, chat_before_p=0.15)
    if kind == "chatty":
        return ChattyHuman(kind, seed, objective, chat_before_p=0.7, chat_during_p=0.5)
    if kind == "requesting":
        return RequestingHuman(kind, seed, objective)
    raise ValueError(f"unknown human kind {kind!r}; choose from {', '.join(HUMAN_KINDS)}")


class _Drops:
    """Which drops the game accepts on the current board: inside it (touching the edge is
    BOUNDARY), and no overlap with a piece on it. Pieces still in the drawer cannot be reached
    from inside the board, so only the board's pieces are checked; their polygons are built once."""

    def __init__(self, game: SimGame) -> None:
        self._placed = {n: prep(polygon_px(p)) for n, p in game.on_board().items()}

    def accepts(self, move: Move) -> bool:
        pose = Pose(*move)
        pts = pose.outline_px()
        bx0, by0, bx1, by1 = BOARD_PX.bounds
        if not all(bx0 < x < bx1 and by0 < y < by1 for x, y in pts):
            return False
        poly = Polygon(pts)
        return not any(p.intersects(poly) for n, p in self._placed.items() if n != move[0])


def _anchor(placed: dict[str, Pose], targets: dict[str, Pose]) -> tuple[float, float]:
    """The shift (board units) between the figure as drawn and the pieces already placed as in
    it (same piece, same rotation): their mean offset, or none when no piece matches."""
    offsets = [(p.x - targets[n].x, p.y - targets[n].y) for n, p in placed.items()
               if n in targets and rotation_distance(p.rotation, targets[n].rotation) < 1.0]
    if not offsets:
        return 0.0, 0.0
    return (sum(o[0] for o in offsets) / len(offsets), sum(o[1] for o in offsets) / len(offsets))
