"""Which objective the game drew at start (``--chat set`` reloads until it is the item's).

The game draws its objective in ``_ready`` and shows it on its "We are making:" sign; nothing reaches
the agent before the human's first chat line or End Turn. So the objective is read off the sign: a
picture of the sign's objective label is compared with the pictures of objectives seen before in the
run (the engine draws the same text to the same pixels on every load). An objective not seen yet is
asked of the game itself: one character typed and sent with the page's socket hook holding that
``chatRequest`` back (``browser.KEPT_CHAT``: the agent hears nothing), which prints the objective the
frame carried; the label's picture is remembered under it. The question stays in the game's chat box
(the agent never got it); the page is played when its objective is the item's, else loaded again. At
most six such questions in a run (the first load of each objective).
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from benchmarks.tangram.real_game.browser import KEPT_CHAT, StepTimeout, frames
from benchmarks.tangram.real_game.human import Human
from benchmarks.tangram.real_game.screen import SEND, world_to_screen

LABEL = (520.0, 497.0, 678.3, 542.4)
"""World pixels (left, top, right, bottom) of the objective's Label on the sign
(Main_scene.tscn: Arena/TargetDisplayText/Objective, its offsets at the sprite's scale)."""
SAME_LIMIT = 3.0
"""Largest mean difference (grey levels, 0-255) between two pictures of the same objective."""
ASK_TEXT = "?"
SETTLE_TRIES = 10

Picture = NDArray[np.float32]


def grey(png: bytes) -> Picture:
    from PIL import Image

    with Image.open(io.BytesIO(png)) as image:
        return np.asarray(image.convert("L"), dtype=np.float32)


def difference(a: Picture, b: Picture) -> float:
    """Mean absolute difference of two pictures of one size (grey levels)."""
    return float(np.abs(a - b).mean())


@dataclass
class SeenObjectives:
    """Pictures of the objective label, by objective."""

    pictures: dict[str, Picture] = field(default_factory=dict)

    def distances(self, picture: Picture) -> list[tuple[float, str]]:
        """Each objective seen with the mean difference of its picture from ``picture``, closest first."""
        return sorted((round(difference(picture, seen), 2), name) for name, seen in self.pictures.items()
                      if seen.shape == picture.shape)

    def recognise(self, picture: Picture) -> str | None:
        """The objective whose picture this is (the closest one within :data:`SAME_LIMIT`), else None."""
        scored = self.distances(picture)
        if scored and scored[0][0] <= SAME_LIMIT:
            return scored[0][1]
        return None

    def learn(self, objective: str, picture: Picture) -> None:
        self.pictures[objective] = picture


def kept_objective(console_text: str) -> str | None:
    """The objective in the hook's line for a chat request it held back, else None."""
    if not console_text.startswith(KEPT_CHAT):
        return None
    try:
        data = json.loads(console_text[len(KEPT_CHAT):])
    except ValueError:
        return None
    objective = data.get("objective") if isinstance(data, dict) else None
    return objective if isinstance(objective, str) else None


async def label_picture(human: Human) -> Picture:
    """The objective label as the page shows it now."""
    left, top = human.at(*world_to_screen(LABEL[0], LABEL[1]))
    right, bottom = human.at(*world_to_screen(LABEL[2], LABEL[3]))
    clip = {"x": left, "y": top, "width": right - left, "height": bottom - top}
    return grey(await human.page.screenshot(clip=clip, timeout=human.step_s * 1000))


async def settled_label(human: Human, picture: Picture) -> Picture:
    """The label once two pictures a few frames apart agree (before a picture not recognised is
    learnt: the engine may still be drawing its first frames); StepTimeout when it never settles."""
    for _ in range(SETTLE_TRIES):
        await frames(human.page, 3)
        again = await label_picture(human)
        if difference(again, picture) <= SAME_LIMIT / 10:
            return again
        picture = again
    raise StepTimeout(f"the objective's label still changed after {SETTLE_TRIES} pictures")


async def ask_game(human: Human) -> str:
    """The objective of the page's game, from a one-character chat line the socket hook keeps from the
    agent (the line stays in the game's chat box)."""
    await human.page.evaluate("() => { window.__runnerKeepChat = true; }")
    await human.type_chat(ASK_TEXT)
    since = human.rec.cursor
    await human.click(SEND)
    line = await human.rec.until(lambda e: e.src == "console" and kept_objective(e.text) is not None, since,
                                 human.step_s, "the game's objective in the chat line held back")
    objective = kept_objective(line.text)
    assert objective is not None
    return objective
