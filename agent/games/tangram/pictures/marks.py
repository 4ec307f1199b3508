"""The images an LLM player sends for one decision, with the marks the config asks for.

Runs in a worker thread (Pillow), once per decision: the board picture gets the grid, the piece
labels and this decision's checked candidates; the drawer picture the labels of the pieces in it.
With ``images.annotate: []`` the pictures go out exactly as the session prepared them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from agent.core.images import encode_image
from agent.games.tangram.config import TangramImageConfig
from agent.games.tangram.contract import TurnView, drawer_of
from agent.games.tangram.pictures.annotate import Encoding, annotate_board, annotate_drawer, drawn_board_layers
from agent.games.tangram.planner.candidates import CandidateSet

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Marks:
    candidates: CandidateSet
    board: bytes | None
    drawer: bytes | None
    board_layers: tuple[str, ...]
    """The layers really drawn on the board picture (labels need a piece on it, candidates one)."""
    drawer_layers: tuple[str, ...]

    @property
    def images(self) -> tuple[bytes, ...]:
        """What goes into the request, in order: board first."""
        return tuple(d for d in (self.board, self.drawer) if d is not None)


def mark_board(view: TurnView, cfg: TangramImageConfig,
               candidates: CandidateSet) -> tuple[bytes | None, tuple[str, ...]]:
    """The board picture with the marks ``cfg.annotate`` asks for, and the layers really drawn."""
    if view.board_png is None:
        return None, ()
    board = view.board()
    shown = candidates.candidates if "candidates" in cfg.annotate else ()
    layers = tuple(drawn_board_layers(cfg.annotate, board, shown))
    # The session's pixels when it left the encoding to us (one encoding, marks included), else its PNG.
    picture = view.board_pixels if view.board_pixels is not None else view.board_png
    try:
        return annotate_board(picture, board, cfg.annotate, shown, _encoding(cfg)), layers
    except Exception as exc:  # the picture as prepared still serves: a mark is never worth a turn
        log.warning("board marks left out: %s: %s", type(exc).__name__, exc)
        if view.board_pixels is not None:
            return encode_image(view.board_pixels, cfg), ()
        return view.board_png, ()


def mark_drawer(view: TurnView, cfg: TangramImageConfig) -> tuple[bytes | None, tuple[str, ...]]:
    """The drawer picture, its pieces labelled when ``cfg.annotate`` has ``labels``."""
    if view.drawer_png is None:
        return None, ()
    pieces = drawer_of(view.state)
    layers = ("labels",) if "labels" in cfg.annotate and pieces else ()
    try:
        return annotate_drawer(view.drawer_png, pieces, cfg.annotate, _encoding(cfg)), layers
    except Exception as exc:
        log.warning("drawer marks left out: %s: %s", type(exc).__name__, exc)
        return view.drawer_png, ()


def mark_images(view: TurnView, cfg: TangramImageConfig, candidates: CandidateSet, drawer: bool) -> Marks:
    """Both pictures in one go (the chat's prompts; tests)."""
    board_png, board_layers = mark_board(view, cfg, candidates)
    drawer_png, drawer_layers = mark_drawer(view, cfg) if drawer else (None, ())
    return Marks(candidates, board_png, drawer_png, board_layers, drawer_layers)


def _encoding(cfg: TangramImageConfig) -> Encoding:
    return Encoding(cfg.format, cfg.jpeg_quality)
