"""The simulator's pictures have the real game's look (agent/games/tangram/pictures/look.py, GAME_FACTS "Seen in
the real game"): dark textured crops of the game's sizes, the vine, flat pieces in the scene's colours,
the human-turn dimming on exactly the right pieces, and the overlap tint only where asked."""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest
from PIL import Image

from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.geometry.screen import BOARD_CROP, DRAWER_CROP
from agent.games.tangram.pictures import look
from agent.games.tangram.pictures.annotate import label_point
from agent.games.tangram.pictures.paint import empty_crop
from agent.games.tangram.replica.crops import board_image, drawer_image, render_board, render_drawer
from agent.games.tangram.sim.simgame import PIECE_NAMES, SimGame


def _img(b64: str) -> Image.Image:
    return Image.open(io.BytesIO(base64.b64decode(b64))).convert("RGB")


def _at(img: Image.Image, pose: Pose, crop: tuple[int, int, int, int]) -> tuple[int, int, int]:
    x, y = label_point(pose, crop, img.size)
    return img.getpixel((round(x), round(y)))  # type: ignore[return-value]


def test_crops_have_the_games_sizes() -> None:
    assert look.BOARD_SIZE == (562, 540) and look.DRAWER_SIZE == (210, 210)
    assert Image.open(io.BytesIO(render_board([]))).size == (562, 540)
    assert Image.open(io.BytesIO(render_drawer([]))).size == (210, 210)


def test_the_empty_board_is_the_dark_textured_panel_with_the_vine_in_its_corner() -> None:
    px = np.asarray(empty_crop("board")).astype(int)
    assert tuple(np.median(px.reshape(-1, 3), axis=0)) == look.BOARD_TEXTURE.median == (21, 21, 21)
    lum = px[60:, :540].mean(axis=2)  # away from the vine
    assert 2.0 < lum.std() < 4.0  # textured, not flat: the game's spread is about 3 levels
    assert np.percentile(lum, 5) >= 14 and np.percentile(lum, 95) <= 28
    green = (px[..., 1] > px[..., 0] + 20) & (px[..., 1] > 60)
    ys, xs = np.nonzero(green)
    assert len(xs) > 100 and xs.min() >= 540 and ys.max() <= 60  # only in the top-right corner
    drawer = np.asarray(empty_crop("drawer")).reshape(-1, 3)
    assert tuple(np.median(drawer, axis=0)) == look.DRAWER_TEXTURE.median


def test_pieces_are_flat_in_the_scenes_colours_with_no_outline() -> None:
    pose = Pose("Cream", 50, 50, 0)
    img = board_image([pose])
    cx, cy = label_point(pose, BOARD_CROP, img.size)
    arr = np.asarray(img)
    mask = np.asarray(board_image([pose])) != np.asarray(empty_crop("board"))
    inside = arr[mask.any(axis=2)]
    assert (inside == look.PIECE_COLORS["Cream"]).all(axis=1).mean() > 0.99  # edge pixels too: no outline
    assert img.getpixel((round(cx), round(cy))) == (250, 193, 147)


def test_dimming_is_exactly_145_of_255_on_every_piece_but_the_lit_one() -> None:
    poses = [Pose("Red", 30, 50, 0), Pose("Green", 70, 50, 0), Pose("Blue", 50, 20, 0)]
    img = board_image(poses, lit="Green")
    for pose in poses:
        colour = look.PIECE_COLORS[pose.piece]
        want = colour if pose.piece == "Green" else tuple(round(c * 145 / 255) for c in colour)
        assert _at(img, pose, BOARD_CROP) == want, pose.piece


def test_the_play_request_carries_the_human_turn_highlight_and_the_ai_turn_does_not() -> None:
    game = SimGame()
    assert game.human_move("Red", 40, 50, 0)
    request = game.start_ai_turn()
    board, drawer = _img(request["board_img"]), _img(request["drawer_img"])
    assert _at(board, game.pose_now("Red"), BOARD_CROP) == look.PIECE_COLORS["Red"]  # the human's piece
    for name in PIECE_NAMES:
        if name == "Red":
            continue
        got = _at(drawer, game.pose_now(name), DRAWER_CROP)
        assert got == look.dimmed(look.PIECE_COLORS[name]), name  # the drawer is dimmed too
    # During the AI's turn the highlight is off: a chat then shows every piece in its colour.
    chat = _img(game.chat_request_frame("hi")["drawer_img"])
    assert _at(chat, game.pose_now("Cream"), DRAWER_CROP) == look.PIECE_COLORS["Cream"]
    # Dimmed Cream is darker than Brown's red channel would say: the reason the agent restores it.
    assert look.dimmed(look.PIECE_COLORS["Cream"])[0] < look.PIECE_COLORS["Brown"][0]


def test_no_move_no_dimming() -> None:
    game = SimGame()
    request = game.start_ai_turn()
    drawer = _img(request["drawer_img"])
    assert _at(drawer, game.pose_now("Blue"), DRAWER_CROP) == look.PIECE_COLORS["Blue"]


@pytest.mark.parametrize("false_tint", [False, True])
def test_the_overlap_tint_shows_only_where_asked(false_tint: bool) -> None:
    game = SimGame(false_tint=false_tint)
    game.place("Red", 30, 50, 0)
    game.start_ai_turn()
    reaction = game.handle_agent_frame('{"type":"play","shape":"Green","position":[60,50],"rotation":0}')
    assert reaction is not None
    play = game.current_turn.plays[-1] if game.current_turn else None
    frame = game.play_feedback_frame(play)
    assert frame["state"]["on_board"]["Green"]["collisions"] == []  # the state says: no overlap
    board = _img(frame["board_img"])
    empty = empty_crop("board")
    for name in ("Green", "Red"):
        pose = game.pose_now(name)
        x, y = label_point(pose, BOARD_CROP, board.size)
        under = empty.getpixel((round(x), round(y)))
        got = board.getpixel((round(x), round(y)))
        if false_tint:
            want = look.tinted(look.PIECE_COLORS[name], under)  # type: ignore[arg-type]
            assert all(abs(a - b) <= 1 for a, b in zip(got, want, strict=True)), (name, got, want)
        else:
            assert got == look.PIECE_COLORS[name]


def test_tinted_and_dimmed_colours_follow_godots_modulate() -> None:
    # #ff291784: red kept, green x 41/255, blue x 23/255, drawn at 132/255 over the pixel under it.
    assert look.tinted((200, 200, 200), (0, 0, 0)) == (round(200 * 132 / 255), round(200 * 41 / 255 * 132 / 255),
                                                        round(200 * 23 / 255 * 132 / 255))
    assert look.piece_color("Cream", dim=True) == (142, 110, 84)
    assert look.piece_color("Red", dim=True, tint=True, under=(21, 21, 21))[0] == round(
        21 * (1 - 132 / 255) + 0.823529 * 255 * 145 / 255 * 132 / 255)


def test_the_drawer_shows_the_pieces_in_their_start_places() -> None:
    game = SimGame()
    img = drawer_image(list(game.current_poses().values()))
    for name in PIECE_NAMES:
        assert _at(img, game.pose_now(name), DRAWER_CROP) == look.PIECE_COLORS[name], name


async def test_a_run_with_false_tint_shows_the_tint_on_feedback_pictures(tmp_path: object) -> None:
    from pathlib import Path

    from agent.games.tangram.config import Config
    from agent.games.tangram.sim.runner import RunOptions, run_in_process

    options = RunOptions(games=1, turns=2, human="cooperative", seed=3, tween=0.0, false_tint=True)
    config = Config.model_validate({"transcripts": {"dir": str(Path(str(tmp_path)) / "t")}})
    results = await run_in_process(config, options, Path(str(tmp_path)) / "agent")
    game = results[0].game
    assert game.false_tint and all(t.ended_by == "finish" for t in game.turns)
    played = [p for t in game.turns for p in t.plays]
    assert played and all(p.collisions == [] for p in played)
    last = played[-1]
    board = _img(game.play_feedback_frame(last)["board_img"])
    pose = game.pose_now(last.shape)
    x, y = label_point(pose, BOARD_CROP, board.size)
    under = empty_crop("board").getpixel((round(x), round(y)))
    want = look.tinted(look.PIECE_COLORS[last.shape], under)  # type: ignore[arg-type]
    assert all(abs(a - b) <= 1 for a, b in zip(board.getpixel((round(x), round(y))), want, strict=True))
